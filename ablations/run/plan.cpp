// plan_suite: the suite's rows as RunConfigs, with every flag that cannot apply here accounted for.
#include "ablations/run/plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace stepwise::ablations {

bench::RunConfig with_flags(const bench::RunConfig& base, const std::vector<std::string>& flags) {
  bench::RunConfig c = base;
  for (const auto* flag : flag_table())
    if (std::find(flags.begin(), flags.end(), flag->name) != flags.end()) flag->apply(c);
  return c;
}

std::vector<PlannedConfig> plan_suite(const Suite& suite, const bench::RunConfig& base,
                                      const std::vector<std::string>& disabled) {
  std::vector<PlannedConfig> planned;
  auto drop_disabled = [&](std::vector<std::string>& flags) {
    std::erase_if(
        flags, [&](const std::string& f) { return std::find(disabled.begin(), disabled.end(), f) != disabled.end(); });
  };
  for (size_t i = 0; i < suite.rows.size(); ++i) {
    PlannedConfig p;
    p.index = i;
    p.row = suite.rows[i];
    const bool changed_anything = !p.row.added.empty() || !p.row.removed.empty();
    drop_disabled(p.row.flags);
    drop_disabled(p.row.added);
    drop_disabled(p.row.removed);
    // Why a flag of this step cannot apply: the device or the run lacks what it needs, or a flag it needs is not in
    // effect beside it (left out of the step, or itself unable to apply).
    const auto cannot_apply = [&](const std::string& name) -> std::optional<std::string> {
      const Flag& flag = *find_flag(name);
      if (auto why = unmet_precondition(flag, base.device, base.world_size)) return why;
      for (const auto needed : flag.needs) {
        const bool asked = std::find(p.row.flags.begin(), p.row.flags.end(), needed) != p.row.flags.end();
        if (!asked || unmet_precondition(*find_flag(needed), base.device, base.world_size))
          return "needs " + std::string(needed) + " in effect beside it (--enable=" + std::string(needed) + "," + name +
                 ")";
      }
      return std::nullopt;
    };
    for (const auto& name : p.row.flags) {
      if (auto why = cannot_apply(name))
        p.skipped_flags.emplace_back(name, *why);
      else
        p.effective.push_back(name);
    }
    // A step is only worth running if something it changes can apply here; otherwise it would measure the
    // previous configuration again under a new name.
    std::vector<std::string> changed = p.row.added;
    changed.insert(changed.end(), p.row.removed.begin(), p.row.removed.end());
    if (!changed.empty()) {
      std::string reasons;
      bool any_applies = false;
      for (const auto& name : changed) {
        if (auto why = cannot_apply(name))
          reasons += (reasons.empty() ? "" : "; ") + name + " " + *why;
        else
          any_applies = true;
      }
      if (!any_applies) p.skip_reason = reasons;
    } else if (changed_anything) {
      p.skip_reason = "its flag is switched off by --disable";
    }
    p.run = with_flags(base, p.effective);
    // A flag whose own check refuses this configuration (flash with a pinned SDPA kernel that has no implementation
    // here) skips it whole with the reason, instead of failing with the library's bare message.
    for (const auto& name : p.effective)
      if (const auto* flag = find_flag(name); !p.skip_reason && flag->unmet)
        if (auto why = flag->unmet(p.run)) p.skip_reason = *why;
    planned.push_back(std::move(p));
  }
  return planned;
}

nlohmann::json plan_json(const Suite& suite, const std::vector<PlannedConfig>& planned, const bench::RunConfig& base,
                         const std::vector<std::string>& implementations, bool implementations_at_ends) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& p : planned) {
    const bool end = p.index == 0 || p.index + 1 == planned.size();
    auto implemented = nlohmann::json::array();
    for (const auto& name : implementations)
      if (name == "libtorch" || !implementations_at_ends || end) implemented.push_back(name);
    auto skipped = nlohmann::json::array();
    for (const auto& [flag, why] : p.skipped_flags) skipped.push_back({{"flag", flag}, {"reason", why}});
    rows.push_back(
        {{"index", p.index},
         {"label", p.row.label},
         {"flags", p.effective},
         {"flags_skipped", skipped},
         {"skip_reason", p.skip_reason ? nlohmann::json(*p.skip_reason) : nlohmann::json()},
         {"precision", p.run.precision()},
         {"batch_size", p.run.batch_size},
         {"seq_len", p.run.seq_len},
         {"max_batch", p.run.max_batch},
         {"max_batch_limit", p.run.max_batch ? nlohmann::json(p.run.effective_max_batch_limit()) : nlohmann::json()},
         {"host_allocator", p.run.host_allocator},
         // The declared horizon every seed trains to when the run goes to a target (null: none, or no target).
         {"step_budget",
          p.run.target && p.run.target->step_budget ? nlohmann::json(*p.run.target->step_budget) : nlohmann::json()},
         {"implementations", implemented}});
  }
  const auto& t = base.timing;
  return {{"suite", suite.name},
          {"kind", to_string(suite.kind)},
          {"configurations", rows},
          {"preset", base.preset},
          {"device", base.device.str()},
          {"timing",
           {{"warmup", t.warmup},
            {"min_steps", t.stop.min_steps},
            {"max_steps", t.stop.max_steps},
            {"max_time_s", t.stop.max_time_s},
            {"max_batch_time_s", base.effective_max_batch_time()}}}};
}

std::string file_stem(size_t index, const std::string& label) {
  std::string slug;
  for (char ch : label) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || ch == '+')
      slug += static_cast<char>(std::tolower(c));
    else if (!slug.empty() && slug.back() != '_')
      slug += '_';
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02zu_", index);
  return prefix + (slug.empty() ? std::string("config") : slug);
}

}  // namespace stepwise::ablations
