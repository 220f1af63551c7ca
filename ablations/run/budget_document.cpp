// budget_json: the search as budget.json keeps it, the figures the terminal's table and ./report both show computed
// here once: N with its bracket, the seconds at N with theirs, and both over the baseline's as intervals.
#include "ablations/run/budget_search.h"

#include <algorithm>

namespace stepwise::ablations {

namespace {

// budget.json's version: 2 is this search (1, scripts/find_budget.py's, had no bracket and no probes' verdicts).
constexpr int kBudgetVersion = 2;

nlohmann::json optional(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json optional(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

// The median over seeds of the timed seconds of a probed budget's N steps; none where it was not probed.
std::optional<double> seconds_at(const RowSearch& row, std::optional<int64_t> n) {
  if (!n) return std::nullopt;
  const auto it = std::find_if(row.probes.begin(), row.probes.end(), [&](const auto& p) { return p.budget == *n; });
  return it == row.probes.end() ? std::nullopt : median(it->seconds);
}

// A figure known to lie in (low, high]: {<name>, low, high}; low 0 where nothing bounds it below, high null where
// nothing bounds it above.
nlohmann::json interval(const char* name, std::optional<double> value, std::optional<double> low,
                        std::optional<double> high) {
  return {{name, optional(value)}, {"low", optional(low)}, {"high", optional(high)}};
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return *a / *b;
}

nlohmann::json probe_json(const BudgetProbeResult& p) {
  const auto& r = p.rule;
  return {{"budget", p.budget},   {"outcome", to_string(outcome_of(r))},
          {"status", r.status},   {"mean", optional(r.mean)},
          {"sd", optional(r.sd)}, {"n", r.n},
          {"t", optional(r.t)},   {"df", optional(r.df)},
          {"p", optional(r.p)},   {"reason", r.reason},
          {"seconds", p.seconds}, {"seconds_median", optional(median(p.seconds))}};
}

nlohmann::json row_json(const RowSearch& row, const RowSearch* baseline) {
  auto probes = nlohmann::json::array();
  for (const auto& p : row.probes) probes.push_back(probe_json(p));
  const auto& v = row.verdict;
  nlohmann::json out{
      {"index", row.index},
      {"label", row.label},
      {"added", row.added},
      {"skipped", row.skip_reason ? nlohmann::json(*row.skip_reason) : nlohmann::json()},
      {"branched", row.branched},
      {"from_scratch", row.from_scratch ? nlohmann::json(*row.from_scratch) : nlohmann::json()},
      {"steps_per_seed", row.steps_per_seed},
      {"search_s", row.wall_s},
      {"budget", optional(v.n)},  // N: the row's smallest budget (the name scripts/find_budget.py gave it)
      {"below", optional(v.below)},
      {"below_outcome", v.below_outcome ? nlohmann::json(to_string(*v.below_outcome)) : nlohmann::json()},
      {"monotone", v.monotone},
      {"held_below", v.held_below},
      {"pattern", v.pattern},
      {"summary", row.skip_reason ? "skipped: " + *row.skip_reason : v.summary},
      {"probes", probes}};
  // N lies in (below, N]; so do its seconds, in (seconds at below, seconds at N] (0 below the grid).
  const auto s_n = seconds_at(row, v.n);
  const auto s_below = v.n ? (v.below ? seconds_at(row, v.below) : std::optional(0.0)) : std::nullopt;
  out["seconds_at_n"] = interval("median", s_n, s_below, s_n);
  const auto at_n = std::find_if(row.probes.begin(), row.probes.end(), [&](const auto& p) { return p.budget == v.n; });
  out["seconds_at_budget"] = at_n == row.probes.end() ? nlohmann::json::array() : nlohmann::json(at_n->seconds);
  out["record_rule"] = at_n == row.probes.end() ? nlohmann::json() : record_rule_json(at_n->rule);
  if (!baseline || baseline == &row || !v.n || !baseline->verdict.n) {
    out["steps_ratio"] = out["n_ratio"] = out["seconds_ratio"] = nullptr;
    return out;
  }
  // Over the baseline's: each side known within its bracket, so the ratio within (low / theirs, mine / their low).
  const auto& b = baseline->verdict;
  const auto mine = static_cast<double>(*v.n), theirs = static_cast<double>(*b.n);
  const auto my_low = v.below ? std::optional(static_cast<double>(*v.below)) : std::optional(0.0);
  const auto their_low = b.below ? std::optional(static_cast<double>(*b.below)) : std::nullopt;
  out["steps_ratio"] = mine / theirs;
  out["n_ratio"] = interval("ratio", mine / theirs, ratio(my_low, theirs), ratio(mine, their_low));
  const auto base_s = seconds_at(*baseline, b.n);
  const auto base_low = b.below ? seconds_at(*baseline, b.below) : std::nullopt;
  out["seconds_ratio"] = interval("ratio", ratio(s_n, base_s), ratio(s_below, base_s), ratio(s_n, base_low));
  return out;
}

}  // namespace

nlohmann::json budget_json(const Suite& suite, const RunContext& context, const BudgetSearchOptions& options,
                           const bench::TargetOptions& target, const BudgetSearchOutcome* outcome) {
  nlohmann::json doc{{"tool", "stepwise-budget-search"},
                     {"version", kBudgetVersion},
                     {"suite", suite.name},
                     {"run_id", context.run_id},
                     {"args", options.command_line},
                     {"target_loss", target.loss},
                     {"record_p", target.record_p},
                     {"seeds", target.seeds},
                     {"grid", options.grid},
                     {"grid_from", options.grid_from},
                     {"branches", options.branches},
                     {"finished", outcome && !outcome->interrupted},
                     {"search_s", outcome ? nlohmann::json(outcome->wall_s) : nlohmann::json()},
                     {"rows", nullptr}};
  if (!outcome) return doc;
  const auto base = std::find_if(outcome->rows.begin(), outcome->rows.end(),
                                 [&](const RowSearch& r) { return r.index == 0 && suite.first_is_baseline; });
  auto rows = nlohmann::json::array();
  for (const auto& row : outcome->rows)
    rows.push_back(row_json(row, base == outcome->rows.end() || base->skip_reason ? nullptr : &*base));
  doc["rows"] = rows;
  return doc;
}

}  // namespace stepwise::ablations
