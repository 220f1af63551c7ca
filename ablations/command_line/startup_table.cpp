// The startup table and its data line.
#include "ablations/command_line/startup_table.h"

#include "ablations/command_line/listings.h"
#include "ablations/flag_table/flags.h"
#include "ablations/tables/text_table.h"
#include "bench/measure/mfu.h"
#include "model/config.h"

#include <algorithm>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// "bf16_mode=autocast, pinned_mode=async, muon_lr=0.02": how each flag some configuration runs acts, from the flags'
// declared options (ablations/flags/<name>.cpp), so a new option shows here without a line of its own.
std::string flag_options_in_use(const bench::RunConfig& s, const std::vector<PlannedConfig>& planned) {
  std::vector<std::string> parts;
  for (const auto* flag : flag_table()) {
    const bool used = std::any_of(planned.begin(), planned.end(), [&](const PlannedConfig& c) {
      return std::find(c.effective.begin(), c.effective.end(), flag->name) != c.effective.end();
    });
    if (!used) continue;
    for (const auto& o : flag->options) {
      if (!o.result_value) continue;
      const auto value = o.result_value(s, s.batch_size);
      parts.push_back(o.name + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    }
  }
  return joined(parts, ", ");
}

// The schedule each configuration trains on, as its flags leave it (the trapezoid flag replaces the run's): one
// description when they share it, else each with its rows: "cosine: ... (row 0); trapezoid: ... (rows 1-4)". Empty
// when every configuration runs at a constant rate.
std::string schedules_in_effect(const std::vector<PlannedConfig>& planned) {
  std::vector<std::pair<std::string, std::vector<size_t>>> kinds;  // description, its rows, in first-seen order
  for (const auto& c : planned) {
    if (c.skip_reason) continue;
    const auto text = c.run.lr_schedule.describe();
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == text; });
    if (it == kinds.end()) it = kinds.insert(kinds.end(), {text, {}});
    it->second.push_back(c.index);
  }
  if (kinds.empty() || (kinds.size() == 1 && kinds.front().first == "constant")) return "";
  if (kinds.size() == 1) return kinds.front().first;
  std::vector<std::string> parts;
  for (const auto& [text, rows] : kinds) {
    std::vector<std::string> each;
    for (const auto row : rows) each.push_back(std::to_string(row));
    const bool contiguous = rows.back() - rows.front() + 1 == rows.size();
    const auto span = rows.size() == 1 ? "row " + each.front()
                      : contiguous     ? "rows " + each.front() + "-" + each.back()
                                       : "rows " + joined(each, ", ");
    parts.push_back(text + " (" + span + ")");
  }
  return joined(parts, "; ");
}

}  // namespace

std::string data_summary(const bench::DataOptions& data) {
  const auto& p = data.provenance;
  if (!p.is_object()) return data.path ? *data.path : "synthetic tokens (seeded)";
  const auto count = [](const nlohmann::json& v) { return v.is_number() ? with_commas(v.get<double>()) : "?"; };
  std::string line = data.path ? *data.path : "synthetic tokens (seeded)";
  const auto files = p.value("files", nlohmann::json::array()).size();
  if (files > 1) line += " (" + std::to_string(files) + " files)";
  line += ": " + count(p.value("train_tokens", nlohmann::json())) + " training tokens";
  const std::string val = p.value("val", "none");
  if (val == "file")
    line += ", " + count(p.value("val_tokens", nlohmann::json())) + " validation tokens from file";
  else if (val == "split")
    line += ", " + count(p.value("val_tokens", nlohmann::json())) + " held out (the last " +
            percent(p.value("val_fraction", 0.0)) + ")";
  line += "; vocabulary " + count(p.value("vocab_size", nlohmann::json())) + " (" +
          p.value("vocab_source", std::string("model")) + ")";
  if (p.contains("tokenizer") && p["tokenizer"].is_string()) line += ", " + p["tokenizer"].get<std::string>();
  return line;
}

std::string startup_table(const Suite& suite, const bench::RunConfig& s, const std::vector<PlannedConfig>& planned,
                          const nlohmann::json& env, const std::string& out_dir) {
  const auto& p = model::preset(s.preset);
  TextTable t(
      {{"stepwise"},
       {suite.name == "single" ? "single configuration" : "suite " + suite.name + " (" + to_string(suite.kind) + ")"}});
  std::string device = s.device.str() + ": " + env.value("device_name", "?");
  if (!s.device.is_cuda()) device += " (" + std::to_string(env.value("cpu_threads", 0)) + " threads)";
  t.add_row({"device", device});
  t.add_row({"torch", env.value("torch_version", "?")});
  const std::string overrides = dimension_overrides(p.config, s.model);
  t.add_row({"preset", s.preset + (overrides.empty() ? "" : " with " + overrides) + ": " +
                           with_commas(static_cast<double>(s.model.parameter_count())) + " parameters"});
  t.add_row({"batch x sequence", std::to_string(s.batch_size) + " x " + std::to_string(s.seq_len)});
  if (s.target) {
    const auto& o = *s.target;
    t.add_row({"target", "validation loss " + fixed(o.loss, 3) + ", evaluated every " + std::to_string(o.eval_every) +
                             " steps on " + std::to_string(o.eval_batches) + " batches; " + std::to_string(o.seeds) +
                             " seeds, each <= " + std::to_string(o.max_steps) + " steps and " + fixed(o.max_time_s, 0) +
                             " s; warm-up " + std::to_string(o.warmup_steps) + " (undone)"});
    // The horizon every seed trains to and the schedule ends at, or why there is none (resolve_horizon).
    t.add_row({"horizon", o.step_budget ? std::to_string(*o.step_budget) + " steps (" + o.budget_from +
                                              "): every seed trains to it; the record rule judges the loss there"
                                        : o.budget_from});
  } else {
    t.add_row({"timing",
               "warm-up " + std::to_string(s.timing.warmup) + ", >= " + std::to_string(s.timing.stop.min_steps) +
                   " steps, until noise <= " + percent(s.timing.stop.max_noise) + " or " +
                   fixed(s.timing.stop.max_time_s, 0) + " s or " + std::to_string(s.timing.stop.max_steps) + " steps"});
  }
  if (const auto schedules = schedules_in_effect(planned); !schedules.empty()) t.add_row({"lr schedule", schedules});
  std::string peak = "n/a on CPU";
  if (s.device.is_cuda()) {
    const auto* entry = bench::find_peak_flops(env.value("device_name", ""));
    peak = entry ? entry->label + ": bf16 " + fixed(entry->bf16 / 1e12, 1) + ", tf32 " + fixed(entry->tf32 / 1e12, 1) +
                       ", fp32 " + fixed(entry->fp32 / 1e12, 1) +
                       (entry->fp8 ? ", fp8 " + fixed(*entry->fp8 / 1e12, 1) : ", fp8 none (no MFU for fp8 rows)") +
                       " TFLOP/s"
                 : "unknown GPU: MFU not reported";
  }
  t.add_row({"MFU peak", peak});
  t.add_row({"data", data_summary(s.data)});
  t.add_row({"seed / lr", std::to_string(s.seed) + " / " + fixed(s.adamw.lr(), 6)});
  if (const auto options = flag_options_in_use(s, planned); !options.empty()) t.add_row({"flag options", options});
  if (std::any_of(planned.begin(), planned.end(), [](const PlannedConfig& c) {
        return std::find(c.effective.begin(), c.effective.end(), "muon") != c.effective.end();
      }))
    t.add_row({"muon's Adam", std::string("the Adam group record ") + bench::kMuonAdamRecord +
                                  " paired Muon with, by default (muon_adam_*, muon_embed_lr, muon_head_lr above): "
                                  "not the baseline's AdamW"});
  // Every row without host_allocator runs under this process's allocator, one with it under its mode in its own.
  const auto& allocator = env.value("host_allocator", nlohmann::json::object());
  t.add_row({"host allocator", allocator.value("mode", "off") + " here" +
                                   (allocator.value("mode", "off") == "off" ? " (the C library's malloc)" : "") +
                                   "; host_allocator rows: " + bench::to_string(s.host_allocator_mode) +
                                   ", each in its own process"});
  t.add_row({"output", out_dir});
  std::string out = t.str() + "\n";
  TextTable steps({{"#", Align::Right}, {"configuration"}, {"flags in effect"}});
  for (const auto& c : planned) {
    std::string note = c.effective.empty() ? "(none)" : joined(c.effective, ",");
    if (c.skip_reason)
      note = "skipped: " + *c.skip_reason;
    else if (!c.skipped_flags.empty()) {
      std::vector<std::string> names;
      for (const auto& [f, why] : c.skipped_flags) names.push_back(f);
      note += "  (not here: " + joined(names, ",") + ")";
    }
    steps.add_row({std::to_string(c.index), c.row.label, note});
  }
  return out + steps.str();
}

}  // namespace stepwise::ablations
