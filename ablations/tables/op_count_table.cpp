// The op-count tables from the result documents' `op_counts` sections.
#include "ablations/tables/op_count_table.h"

#include "ablations/tables/text_table.h"
#include "bench/trace/op_counts.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// Operators listed under the totals; the rest are in each result's op_counts.per_step.aten_ops.
constexpr size_t kOpsShown = 15;

// One implementation's counts of a configuration: op_counts as its result has it (ok or unavailable).
struct Counted {
  std::string implementation;
  const nlohmann::json* counts = nullptr;
  bool ok() const { return (*counts)["status"] == "ok"; }
  const nlohmann::json& per_step() const { return (*counts)["per_step"]; }
};

struct Configuration {
  std::string suite, label;
  int index = 0;
  std::vector<Counted> rows;
};

int64_t value_in(const nlohmann::json& map, const std::string& key) {
  return map.is_object() && map.contains(key) ? map[key].get<int64_t>() : 0;
}

// A per-step total that is null where it could not be counted (a CPU's device activities): 0 in the table.
int64_t total_in(const nlohmann::json& per_step, const char* key) {
  const auto& n = per_step.value(key, nlohmann::json());
  return n.is_null() ? int64_t{0} : n.get<int64_t>();
}

std::string signed_commas(int64_t v) { return (v > 0 ? "+" : "") + with_commas(static_cast<double>(v)); }

// The per-step figure `read` gives each row, and the engine's minus Python eager's when `difference` is on.
template <typename Read>
std::vector<std::string> cells(const std::string& what, const std::vector<Counted>& rows, const Read& read,
                               bool difference) {
  std::vector<std::string> out{what};
  int64_t engine = 0, eager = 0;
  for (const auto& r : rows) {
    if (!r.ok()) {
      out.push_back("-");
      continue;
    }
    const int64_t v = read(r.per_step());
    if (r.implementation == "libtorch") engine = v;
    if (r.implementation == "python-eager") eager = v;
    out.push_back(with_commas(static_cast<double>(v)));
  }
  if (difference) out.push_back(signed_commas(engine - eager));
  return out;
}

std::string table_for(const Configuration& c) {
  const auto find = [&](const char* implementation) {
    return std::find_if(c.rows.begin(), c.rows.end(),
                        [&](const Counted& r) { return r.implementation == implementation && r.ok(); });
  };
  const bool difference = find("libtorch") != c.rows.end() && find("python-eager") != c.rows.end();
  std::vector<TextTable::Column> columns{{"per step"}};
  for (const auto& r : c.rows) columns.push_back({r.implementation, Align::Right});
  if (difference) columns.push_back({"libtorch - eager", Align::Right});
  TextTable t(std::move(columns));

  std::set<std::string> devices, ops, launches;
  bool activities = false;
  size_t steps = 0, counted = 0;
  for (const auto& r : c.rows) {
    if (!r.ok()) continue;
    ++counted;
    steps = std::max(steps, (*r.counts)["steps_counted"].get<size_t>());
    for (const auto& [device, a] : r.per_step()["allocations"].items()) devices.insert(device);
    for (const auto& [name, n] : r.per_step()["aten_ops"].items()) ops.insert(name);
    activities = activities || !r.per_step()["device_activity_total"].is_null();
    const auto calls = r.per_step().value("runtime_calls", nlohmann::json());  // null on a CPU
    if (calls.is_object())
      for (const auto& [name, n] : calls.items())
        if (bench::is_launch(name)) launches.insert(name);
  }
  t.add_row(cells(
      "ATen ops", c.rows, [](const auto& s) { return s["aten_op_total"].template get<int64_t>(); }, difference));
  for (const auto& d : devices) {
    t.add_row(cells(
        d + " allocations", c.rows,
        [&](const auto& s) { return value_in(s["allocations"].value(d, nlohmann::json()), "count"); }, difference));
    t.add_row(cells(
        d + " bytes allocated", c.rows,
        [&](const auto& s) { return value_in(s["allocations"].value(d, nlohmann::json()), "bytes"); }, difference));
  }
  if (activities) {
    t.add_row(cells(
        "device activities", c.rows, [](const auto& s) { return total_in(s, "device_activity_total"); }, difference));
    t.add_row(cells(
        "CUDA runtime calls", c.rows, [](const auto& s) { return total_in(s, "runtime_call_total"); }, difference));
    // The host's launches, kernel by kernel or a graph at once: what a launch-bound step pays for.
    t.add_row(cells(
        "launches", c.rows, [](const auto& s) { return total_in(s, "launch_total"); }, difference));
    for (const auto& name : launches)
      t.add_row(cells(
          "  " + name, c.rows,
          [&](const auto& s) { return value_in(s.value("runtime_calls", nlohmann::json()), name); }, difference));
  }

  // The operators whose counts differ between the rows, the largest gap first (the engine's against eager's when both
  // ran), then by name.
  std::vector<std::pair<int64_t, std::string>> differing;
  for (const auto& name : ops) {
    std::vector<int64_t> counts;
    int64_t engine = 0, eager = 0;
    for (const auto& r : c.rows) {
      if (!r.ok()) continue;
      counts.push_back(value_in(r.per_step()["aten_ops"], name));
      if (r.implementation == "libtorch") engine = counts.back();
      if (r.implementation == "python-eager") eager = counts.back();
    }
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    if (*lo == *hi) continue;
    differing.emplace_back(difference ? std::llabs(engine - eager) : *hi - *lo, name);
  }
  std::sort(differing.begin(), differing.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (size_t i = 0; i < std::min(differing.size(), kOpsShown); ++i) {
    const auto& name = differing[i].second;
    t.add_row(cells(
        "  " + name, c.rows, [&](const auto& s) { return value_in(s["aten_ops"], name); }, difference));
  }

  std::string out = "[" + c.suite + " " + std::to_string(c.index) + "] " + c.label + ": one step's work, " +
                    std::to_string(steps) + " steps counted after the timed ones\n" + t.str();
  if (differing.empty() && counted > 1) out += "every ATen operator is called as often in each row\n";
  if (differing.size() > kOpsShown)
    out += std::to_string(differing.size() - kOpsShown) +
           " more operators differ (each result's op_counts.per_step.aten_ops has them all)\n";
  for (const auto& r : c.rows) {
    if (!r.ok()) {
      out += r.implementation + ": " + (*r.counts).value("reason", std::string("op counts unavailable")) + "\n";
    } else if (!(*r.counts)["same_each_step"].get<bool>()) {
      std::string varied;
      for (const auto& [name, values] : (*r.counts)["varying"].items())
        varied += (varied.empty() ? "" : ", ") + name + " " + values.dump();
      out += r.implementation + ": the counted steps differed (shown: the last): " + varied + "\n";
    }
  }
  return out;
}

}  // namespace

std::string op_count_table(const std::vector<nlohmann::json>& documents) {
  std::vector<Configuration> configurations;
  for (const auto& doc : documents) {
    const auto it = doc.find("op_counts");
    if (it == doc.end() || !it->is_object()) continue;
    Configuration c;
    c.suite = doc["suite"].is_null() ? "single" : doc["suite"]["name"].get<std::string>();
    c.index = doc["suite"].is_null() ? 0 : doc["suite"]["index"].get<int>();
    c.label = doc["suite"].is_null() ? doc["name"].get<std::string>() : doc["suite"]["label"].get<std::string>();
    auto same = std::find_if(configurations.begin(), configurations.end(),
                             [&](const Configuration& o) { return o.suite == c.suite && o.index == c.index; });
    if (same == configurations.end()) same = configurations.insert(configurations.end(), c);
    same->rows.push_back({doc.value("implementation", "libtorch"), &*it});
  }
  std::string out;
  for (const auto& c : configurations) out += (out.empty() ? "" : "\n") + table_for(c);
  return out;
}

}  // namespace stepwise::ablations
