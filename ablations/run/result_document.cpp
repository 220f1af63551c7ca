// result_document: every key of results/schema.json is written here, from the plan, the engine's RunResult and the
// loss check. NaN and inf become null (JSON has neither).
#include "ablations/run/result_document.h"

#include "ablations/flag_table/flags.h"
#include "bench/measure/seed_statistics.h"
#include "bench/phases.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stepwise::ablations {

namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

nlohmann::json config_json(const PlannedConfig& p, const bench::RunResult* r) {
  const auto& c = p.run;
  // A row that failed before its batch was set (a host_allocator row whose process never started): the planned one.
  const int64_t measured_batch = r && r->batch_size > 0 ? r->batch_size : c.batch_size;
  const std::string optimizer = r ? r->optimizer : "";
  const std::string clock = r ? r->clock : "";
  const auto& m = c.model;
  nlohmann::json j;
  j["preset"] = c.preset;
  j["model"] = {{"vocab_size", m.vocab_size()},
                {"padded_vocab_size", m.padded_vocab_size()},
                {"context_length", m.context_length()},
                {"n_layer", m.n_layer()},
                {"n_head", m.n_head()},
                {"n_embd", m.n_embd()},
                {"dropout", m.dropout()},
                {"qkv_bias", m.qkv_bias()},
                {"parameters", m.parameter_count()},  // padded vocabulary included when on
                {"flops_per_token", m.flops_per_token(c.seq_len)}};
  j["batch_size"] = measured_batch;
  j["base_batch_size"] = c.batch_size;
  j["seq_len"] = c.seq_len;
  // How each flag acted: every option its declaration records, null while the flag is off (bf16_mode, ...).
  for (const auto* flag : flag_table()) {
    const bool on = std::find(p.effective.begin(), p.effective.end(), flag->name) != p.effective.end();
    for (const auto& o : flag->options)
      if (o.result_value) j[o.name] = on ? o.result_value(c, measured_batch) : nlohmann::json();
  }
  // Which record the muon flag's Adam group defaults to (its options above give the values that ran), and the dtype
  // Newton-Schulz ran in: muon_ns_dtype is what was asked ("auto"), this what it resolved to on the row's device.
  const bool muon = std::find(p.effective.begin(), p.effective.end(), "muon") != p.effective.end();
  j["muon_adam_record"] = muon ? nlohmann::json(bench::kMuonAdamRecord) : nlohmann::json();
  j["muon_ns_dtype_used"] =
      muon ? nlohmann::json(bench::to_string(bench::resolved_ns_dtype(c.muon_options.ns_dtype(), c.device)))
           : nlohmann::json();
  j["optimizer"] = optimizer.empty() ? bench::to_string(c.optimizer()) : optimizer;
  j["sdpa_backend_used"] = r && r->sdpa_backend_used ? nlohmann::json(*r->sdpa_backend_used) : nlohmann::json();
  j["fp8_layers"] = r && r->fp8_layers ? nlohmann::json(*r->fp8_layers) : nlohmann::json();
  j["precision"] = c.precision();
  j["device"] = c.device.str();
  j["seed"] = c.seed;
  j["lr"] = c.adamw.lr();
  j["weight_decay"] = c.adamw.weight_decay();
  j["adamw_beta1"] = c.adamw.beta1();
  j["adamw_beta2"] = c.adamw.beta2();
  j["adamw_eps"] = c.adamw.eps();
  std::string source = c.data.path ? "file" : "synthetic";
  if (c.data.provenance.is_object()) source = c.data.provenance.value("kind", source);  // "corpus" for corpus:NAME
  j["data"] = {{"source", source},
               {"format", c.data.path ? bench::to_string(c.data.format) : "synthetic"},
               {"path", c.data.path ? nlohmann::json(*c.data.path) : nlohmann::json()},
               {"provenance", c.data.provenance}};  // what was read: files, sha256, validation, vocabulary
  const auto& t = c.timing;
  j["timing"] = {{"warmup", t.warmup},
                 {"min_steps", t.stop.min_steps},
                 {"max_steps", t.stop.max_steps},
                 {"max_noise", t.stop.max_noise},
                 {"max_time_s", t.stop.max_time_s},
                 {"check_every", t.check_every},
                 {"host_sync", bench::to_string(t.host_sync)},
                 {"clock", clock.empty() ? (c.device.is_cuda() ? "cuda_event" : "steady_clock") : clock}};
  const auto& lr = c.lr_schedule;
  j["lr_schedule"] = {{"kind", bench::to_string(lr.kind)},
                      {"warmup_steps", lr.warmup_steps},
                      {"decay_steps", lr.decay_steps},
                      {"min_ratio", lr.min_ratio},
                      {"cooldown_steps", lr.kind == bench::LrScheduleKind::Trapezoid ? nlohmann::json(lr.cooldown())
                                                                                     : nlohmann::json(nullptr)}};
  if (c.target) {
    const auto& o = *c.target;
    j["target"] = {{"loss", o.loss},
                   {"eval_every", o.eval_every},
                   {"eval_batches", o.eval_batches},
                   {"max_steps", o.max_steps},
                   {"max_time_s", o.max_time_s},
                   {"warmup_steps", o.warmup_steps},
                   {"seeds", o.seeds},
                   {"step_budget", optional_json(o.step_budget)},
                   {"budget_from", o.budget_from},
                   {"record_p", o.record_p}};
  } else {
    j["target"] = nullptr;
  }
  j["flags"] = p.effective;
  j["flags_requested"] = p.row.flags;
  auto skipped = nlohmann::json::array();
  for (const auto& [flag, why] : p.skipped_flags) skipped.push_back({{"flag", flag}, {"reason", why}});
  j["flags_skipped"] = skipped;
  return j;
}

namespace {

nlohmann::json seed_summary_json(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  const auto s = bench::summarize_seeds(values);
  return {{"n", s.n},
          {"median", s.median},
          {"median_low", optional_json(s.median_low)},
          {"median_high", optional_json(s.median_high)},
          {"olympic_mean", s.olympic_mean},
          {"mean", s.mean},
          {"mean_low", optional_json(s.mean_low)},
          {"mean_high", optional_json(s.mean_high)}};
}

nlohmann::json check_json(const LossCheck& c) {
  nlohmann::json j{{"status", c.status},
                   {"reason", c.reason},
                   {"class", c.math ? nlohmann::json(to_string(*c.math)) : nlohmann::json()},
                   {"steps_compared", c.steps_compared},
                   {"start_diff", optional_json(c.start_diff)},
                   {"end_diff", optional_json(c.end_diff)},
                   {"drop", optional_json(c.drop)},
                   {"baseline_drop", optional_json(c.baseline_drop)}};
  j["tolerance"] = c.tolerance ? nlohmann::json{{"end_rel", c.tolerance->end_rel},
                                                {"drop_ratio", c.tolerance->drop_ratio},
                                                {"start_rel", c.tolerance->start_rel}}
                               : nlohmann::json();
  return j;
}

nlohmann::json summary_json(const bench::RunConfig& c, const bench::RunResult& r, const LossCheck& check,
                            const std::optional<LossCheck>& vs_libtorch) {
  if (!r.step_ms) return nullptr;
  const auto& s = *r.step_ms;
  nlohmann::json j;
  j["steps"] = s.n;
  j["tokens_per_step"] = r.world_size * r.batch_size * c.seq_len;  // every rank's tokens when data parallel
  j["tokens_per_s"] = r.tokens_per_s;
  j["step_ms"] = {{"median", s.median}, {"mean", s.mean}, {"min", s.min},
                  {"max", s.max},       {"p10", s.p10},   {"p90", s.p90},
                  {"stddev", s.stddev}, {"cv", s.cv},     {"noise", number_or_null(s.noise)}};
  j["stop_reason"] = r.stop_reason;
  if (r.memory) {
    const auto& m = *r.memory;
    j["memory"] = {
        {"kind", m.kind},
        {"scope", m.scope},
        {"peak_allocated_bytes", optional_json(m.peak_allocated_bytes)},
        {"peak_reserved_bytes", optional_json(m.peak_reserved_bytes)},
        {"current_allocated_bytes", optional_json(m.current_allocated_bytes)},
        {"current_reserved_bytes", optional_json(m.current_reserved_bytes)},
        {"peak_rss_bytes", optional_json(m.peak_rss_bytes)},
        {"forward_backward_peak_bytes", optional_json(m.forward_backward_peak_bytes)},
        {"weights_bytes", optional_json(m.weights_bytes)},
        {"gradients_bytes", optional_json(m.gradients_bytes)},
        {"optimizer_state_bytes", optional_json(m.optimizer_state_bytes)},
        {"activation_bytes", optional_json(m.activation_bytes)},
        {"activation_basis", m.activation_basis.empty() ? nlohmann::json() : nlohmann::json(m.activation_basis)},
        {"estimated_activation_bytes", optional_json(m.estimated_activation_bytes)}};
  } else {
    j["memory"] = {{"kind", c.device.is_cuda() ? "cuda_caching_allocator" : "process_rss"},
                   {"peak_allocated_bytes", nullptr},
                   {"peak_reserved_bytes", nullptr}};
  }
  if (r.mfu) {
    const auto& m = *r.mfu;
    j["mfu"] = {{"value", optional_json(m.value)},
                {"precision", m.precision},
                {"peak_flops", optional_json(m.peak_flops)},
                {"peak", m.peak_label.empty() ? nlohmann::json() : nlohmann::json(m.peak_label + " " + m.precision)},
                {"peak_source", m.peak_source.empty() ? nlohmann::json() : nlohmann::json(m.peak_source)},
                {"flops_per_token", m.flops_per_token},
                {"hfu", optional_json(m.hfu)},
                {"hardware_flops_per_token", m.hardware_flops_per_token},
                {"fp8_flops_per_token", optional_json(m.fp8_flops_per_token)},
                {"reason", optional_json(m.reason)}};
  }
  j["loss"] = {{"first", number_or_null(r.steps.front().loss)},
               {"last", number_or_null(r.steps.back().loss)},
               {"check", check_json(check)}};
  if (vs_libtorch) j["loss"]["vs_libtorch"] = check_json(*vs_libtorch);
  // Stopped by --max-time before --min-steps steps: kept, and marked, rather than lost or passed off as complete.
  j["short"] = r.stop_reason == "max_time" && s.n < c.timing.stop.min_steps;
  // Measured noisier than the run asked for (--max-noise): the gate and the report say so rather than trust its median.
  j["noisy"] = !std::isfinite(s.noise) || s.noise > c.timing.stop.max_noise;
  j["compile_s"] = optional_json(r.compile_s);
  return j;
}

nlohmann::json steps_json(const std::vector<bench::StepRecord>& steps) {
  auto j = nlohmann::json::array();
  for (const auto& s : steps) {
    j.push_back({{"ms", s.ms}, {"loss", number_or_null(s.loss)}});
    if (s.cpu_ms) j.back()["cpu_ms"] = *s.cpu_ms;
  }
  return j;
}

nlohmann::json probe_json(const std::optional<bench::MaxBatchProbe>& probe) {
  if (!probe) return nullptr;
  nlohmann::json estimate;  // null where the memory available was unknown
  if (const auto& e = probe->estimate)
    estimate = {{"activation_bytes_per_sequence", e->activation_bytes_per_sequence},
                {"state_bytes", e->state_bytes},
                {"memory_bytes", e->memory_bytes},
                {"largest_batch", e->largest_batch},
                {"largest_power_of_two", e->largest_power_of_two},
                // The probe's batch over the estimate's: above 1, the estimate is too cautious; below, too bold.
                {"chosen_vs_estimate", e->largest_power_of_two > 0 ? nlohmann::json(static_cast<double>(probe->chosen) /
                                                                                    e->largest_power_of_two)
                                                                   : nlohmann::json()}};
  auto tried = nlohmann::json::array();
  for (const auto& t : probe->tried)
    tried.push_back(
        {{"batch", t.batch}, {"fit", t.fit}, {"error", t.error.empty() ? nlohmann::json() : nlohmann::json(t.error)}});
  return {{"base", probe->base},
          {"limit", probe->limit},
          {"time_cap_s", probe->time_cap_s},
          {"tried", tried},
          {"chosen", probe->chosen},
          {"stopped", probe->stopped ? nlohmann::json(*probe->stopped) : nlohmann::json()},
          {"estimate", estimate}};
}

}  // namespace

nlohmann::json convergence_json(const bench::TargetOptions& target, const std::vector<bench::SeedRun>& seeds,
                                const ConvergenceVerdict& guard, const std::optional<TargetVerdict>& verdict,
                                const std::optional<RecordRule>& rule) {
  auto runs = nlohmann::json::array();
  std::vector<double> steps, tokens, seconds;
  for (const auto& s : seeds) {
    auto curve = nlohmann::json::array();
    for (const auto& p : s.curve)
      curve.push_back({{"step", p.step},
                       {"tokens", p.tokens},
                       {"time_s", p.time_s},
                       {"val_loss", number_or_null(p.val_loss)},
                       {"train_loss", p.train_loss ? number_or_null(*p.train_loss) : nlohmann::json()}});
    runs.push_back(
        {{"seed", s.seed},
         {"status", s.status},
         {"reason", optional_json(s.reason)},
         {"stop_reason", s.stop_reason},
         {"reached", s.reached},
         {"steps", optional_json(s.steps)},
         {"tokens", optional_json(s.tokens)},
         {"time_s", optional_json(s.time_s)},
         {"warmup_s", s.warmup_s},
         {"eval_s", s.eval_s},
         // The declared horizon's loss: every seed trains to the budget, crossed or not (null without one).
         {"loss_at_budget", target.step_budget ? optional_json(loss_at(s, *target.step_budget)) : nlohmann::json()},
         {"curve", curve}});
    if (s.reached) {
      steps.push_back(static_cast<double>(*s.steps));
      tokens.push_back(static_cast<double>(*s.tokens));
      seconds.push_back(*s.time_s);
    }
  }
  const auto doubles = [](const std::vector<double>& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json g{{"status", guard.status},
                   {"reason", guard.reason},
                   {"class", optional_json(guard.math)},
                   {"test", guard.test},
                   {"t", optional_json(guard.t)},
                   {"df", optional_json(guard.df)},
                   {"p", optional_json(guard.p)},
                   {"steps_ratio", optional_json(guard.steps_ratio)},
                   {"time_ratio", optional_json(guard.time_ratio)},
                   {"steps", doubles(guard.steps)},
                   {"baseline_steps", doubles(guard.baseline_steps)},
                   {"not_reached", guard.not_reached},
                   {"baseline_not_reached", guard.baseline_not_reached}};
  return {{"target_loss", target.loss},
          {"seeds", runs},
          {"runs", seeds.size()},
          {"reached", steps.size()},
          {"steps", seed_summary_json(steps)},
          {"tokens", seed_summary_json(tokens)},
          {"time_s", seed_summary_json(seconds)},
          {"guard", g},
          {"step_budget", optional_json(target.step_budget)},
          {"verdict", verdict ? verdict_json(*verdict) : nlohmann::json()},
          {"record_rule", rule ? record_rule_json(*rule) : nlohmann::json()}};
}

std::string settings_hash(const RunContext& context, const PlannedConfig& p, const std::string& implementation) {
  auto defining = config_json(p, nullptr);
  defining["implementation"] = implementation;
  // Not the process's host allocator: a row's own is in its config (host_allocator), and a row run in a child process
  // under another one must still find the baseline its parent measured.
  for (const char* key : {"device_name", "git_commit", "git_dirty", "torch_version"})
    defining["env"][key] = context.env.value(key, nlohmann::json());
  // FNV-1a over the canonical dump: stable across runs and builds, unlike std::hash.
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char ch : defining.dump()) hash = (hash ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

nlohmann::json flags_info() {
  auto j = nlohmann::json::array();
  for (const auto* f : flag_table())
    j.push_back({{"name", f->name},
                 {"summary", f->summary},
                 {"reference", f->reference},
                 {"stage", f->stage},
                 {"applies", to_string(f->applies)}});
  return j;
}

nlohmann::json result_document(const RunContext& context, const Suite& suite, const PlannedConfig& p,
                               const std::string& implementation, const bench::RunResult* r, const LossCheck& check,
                               const std::optional<LossCheck>& vs_libtorch) {
  nlohmann::json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["tool"] = "stepwise";
  doc["run_id"] = context.run_id;
  doc["name"] =
      suite.name + "/" + file_stem(p.index, p.row.label) + (implementation == "libtorch" ? "" : "." + implementation);
  doc["implementation"] = implementation;
  if (r) {
    doc["status"] = r->status;
    doc["reason"] = r->reason ? nlohmann::json(*r->reason) : nlohmann::json();
  } else {
    doc["status"] = "skipped";
    doc["reason"] = p.skip_reason.value_or("skipped");
  }
  doc["suite"] = {{"name", suite.name},         {"kind", to_string(suite.kind)}, {"index", p.index},
                  {"count", suite.rows.size()}, {"label", p.row.label},          {"added", p.row.added},
                  {"removed", p.row.removed},   {"labels", suite.labels()}};
  auto config = config_json(p, r);
  config["settings_hash"] = settings_hash(context, p, implementation);
  doc["config"] = config;
  doc["env"] = context.env;
  if (r && !r->python_versions.is_null()) doc["env"]["python"] = r->python_versions;
  doc["summary"] = r ? summary_json(p.run, *r, check, vs_libtorch) : nlohmann::json();
  doc["steps"] = r ? steps_json(r->steps) : nlohmann::json::array();
  doc["warmup"] = r ? steps_json(r->warmup) : nlohmann::json::array();
  // Beside the step times, never instead of them: the table's ms/step stays the whole step.
  doc["phases"] = r ? bench::phases_json(r->phases, r->step_ms ? std::optional(r->step_ms->median) : std::nullopt,
                                         r->clock, r->phase_note)
                    : nlohmann::json();
  doc["max_batch_probe"] = r ? probe_json(r->probe) : nlohmann::json();
  doc["trace"] = r ? r->trace : nlohmann::json();
  doc["op_counts"] = r ? r->op_counts : nlohmann::json();
  doc["gpu_state"] = r && !r->gpu_state.is_null()
                         ? r->gpu_state
                         : nlohmann::json{{"status", "not recorded"},
                                          {"reason", r ? "the configuration ended before its warm-up"
                                                       : "the configuration did not run"}};
  doc["convergence"] = r ? r->convergence : nlohmann::json();
  doc["distributed"] = r ? r->distributed : nlohmann::json();
  doc["sweep"] = context.sweep;
  doc["flags_info"] = flags_info();
  return doc;
}

}  // namespace stepwise::ablations
