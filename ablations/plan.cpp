// plan_suite and make_run_config.
#include "ablations/plan.h"

#include "model/presets.h"
#include "model/sdpa_backend.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace stepwise::ablations {

bench::RunConfig make_run_config(const Settings& s, const std::vector<std::string>& flags) {
  bench::RunConfig c;
  c.preset = s.preset;
  c.model = model::preset(s.preset).config;
  c.batch_size = s.batch_size;
  c.seq_len = s.seq_len;
  c.device = s.device;
  c.seed = s.seed;
  c.adamw.lr(s.lr);
  c.adamw_kind = s.adamw_baseline;
  c.timing = s.timing;
  c.data = s.data;
  c.max_batch_limit = s.max_batch_limit;
  c.trace_steps = s.trace_steps;
  for (const auto& spec : flag_table())
    if (std::find(flags.begin(), flags.end(), spec.name) != flags.end()) spec.apply(c, s.flag_options);
  return c;
}

std::vector<PlannedConfig> plan_suite(const Suite& suite, const Settings& settings) {
  std::vector<PlannedConfig> planned;
  auto drop_disabled = [&](std::vector<std::string>& flags) {
    std::erase_if(flags, [&](const std::string& f) {
      return std::find(settings.disabled.begin(), settings.disabled.end(), f) != settings.disabled.end();
    });
  };
  for (size_t i = 0; i < suite.steps.size(); ++i) {
    PlannedConfig p;
    p.index = i;
    p.step = suite.steps[i];
    const bool changed_anything = !p.step.added.empty() || !p.step.removed.empty();
    drop_disabled(p.step.flags);
    drop_disabled(p.step.added);
    drop_disabled(p.step.removed);
    for (const auto& name : p.step.flags) {
      if (auto why = unmet_precondition(*find_flag(name), settings.device))
        p.skipped_flags.emplace_back(name, *why);
      else
        p.effective.push_back(name);
    }
    // A step is only worth running if something it changes can apply here; otherwise it would measure the
    // previous configuration again under a new name.
    std::vector<std::string> changed = p.step.added;
    changed.insert(changed.end(), p.step.removed.begin(), p.step.removed.end());
    if (!changed.empty()) {
      std::string reasons;
      bool any_applies = false;
      for (const auto& name : changed) {
        if (auto why = unmet_precondition(*find_flag(name), settings.device))
          reasons += (reasons.empty() ? "" : "; ") + name + " " + *why;
        else
          any_applies = true;
      }
      if (!any_applies) p.skip_reason = reasons;
    } else if (changed_anything) {
      p.skip_reason = "its flag is switched off by --disable";
    }
    p.run = make_run_config(settings, p.effective);
    // A pinned SDPA backend without a kernel for this configuration would fail with SDPA's bare "No available
    // kernel"; every configuration that runs flash says why instead.
    if (!p.skip_reason && p.run.model.flash())
      if (auto why = model::sdpa_backend_unavailable(p.run.model.sdpa_backend(), settings.device.is_cuda(), p.run.bf16,
                                                     p.run.model.dropout()))
        p.skip_reason = "--sdpa-backend=" + model::to_string(p.run.model.sdpa_backend()) + " " + *why;
    planned.push_back(std::move(p));
  }
  return planned;
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
