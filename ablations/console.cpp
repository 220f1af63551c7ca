// What a person reads on the terminal: listings and --describe before a run, the llm.c-style startup table, the
// progress line while it runs, and the step-by-step table at the end.
#include "ablations/console.h"

#include "ablations/flags.h"
#include "ablations/text_table.h"
#include "bench/measure/mfu.h"
#include "model/config.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

namespace stepwise::ablations {

namespace {

using Align = TextTable::Align;

// Weights, gradients and AdamW's two moments: four copies of the parameters.
constexpr double kTrainingStateCopies = 4;

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string step_change(const nlohmann::json& doc) {
  const auto& suite = doc["suite"];
  if (suite.is_null()) return "";
  std::vector<std::string> parts;
  for (const auto& f : suite["added"]) parts.push_back("+" + f.get<std::string>());
  if (suite.contains("removed"))
    for (const auto& f : suite["removed"]) parts.push_back("-" + f.get<std::string>());
  return joined(parts, " ");
}

}  // namespace

std::string list_flags(bool json, bool verbose) {
  if (json) {
    auto j = nlohmann::json::array();
    for (const auto* f : flag_table()) {
      auto code = nlohmann::json::array();
      for (const auto& path : f->code) code.push_back(path);
      j.push_back({{"name", f->name},
                   {"summary", f->summary},
                   {"reference", f->reference},
                   {"stage", f->stage},
                   {"applies", to_string(f->applies)},
                   {"precondition", f->precondition},
                   {"code", code}});
    }
    return j.dump(2) + "\n";
  }
  TextTable t({{"flag"}, {"applies"}, {"stage"}, {"on: what it switches to  /  off: the reference"}});
  for (const auto* f : flag_table()) {
    t.add_row({std::string(f->name), to_string(f->applies), std::string(f->stage), "on:  " + std::string(f->summary)});
    t.add_row({"", "", "", "off: " + std::string(f->reference)});
    if (!f->precondition.empty()) t.add_row({"", "", "", "needs " + std::string(f->precondition)});
    if (verbose)
      for (const auto& path : f->code) t.add_row({"", "", "", "code: " + std::string(path)});
  }
  return t.str() + "\nAll flags are off by default: the baseline is Raschka's 00_orig.py." +
         (verbose ? "" : " --verbose adds where each flag's code lives.") + "\n";
}

std::string list_presets(bool json) {
  if (json) {
    auto j = nlohmann::json::array();
    for (const auto& p : model::presets())
      j.push_back({{"name", p.name},
                   {"description", p.description},
                   {"parameters", p.config.parameter_count()},
                   {"n_layer", p.config.n_layer()},
                   {"n_head", p.config.n_head()},
                   {"n_embd", p.config.n_embd()},
                   {"context_length", p.config.context_length()},
                   {"vocab_size", p.config.vocab_size()},
                   {"default_batch_size", p.default_batch_size},
                   {"default_seq_len", p.default_seq_len}});
    return j.dump(2) + "\n";
  }
  TextTable t({{"preset"},
               {"parameters", Align::Right},
               {"layers", Align::Right},
               {"heads", Align::Right},
               {"width", Align::Right},
               {"context", Align::Right},
               {"batch x seq"},
               {"description"}});
  for (const auto& p : model::presets()) {
    const auto& c = p.config;
    t.add_row({p.name, with_commas(static_cast<double>(c.parameter_count())), std::to_string(c.n_layer()),
               std::to_string(c.n_head()), std::to_string(c.n_embd()), std::to_string(c.context_length()),
               std::to_string(p.default_batch_size) + " x " + std::to_string(p.default_seq_len), p.description});
  }
  return t.str();
}

std::string list_suites() {
  TextTable t({{"suite"}, {"kind"}, {"configurations", Align::Right}, {"description"}});
  for (const auto& name : suite_names()) {
    const Suite s = find_suite(name);
    t.add_row({s.name, to_string(s.kind), std::to_string(s.steps.size()), s.description.substr(0, 90)});
  }
  return t.str();
}

std::string dimension_overrides(const model::GPTConfig& preset, const model::GPTConfig& m) {
  std::vector<std::string> changed;
  const auto add = [&](const char* name, int64_t was, int64_t now) {
    if (was != now) changed.push_back(std::string(name) + " " + std::to_string(now));
  };
  add("n_layer", preset.n_layer(), m.n_layer());
  add("n_head", preset.n_head(), m.n_head());
  add("n_embd", preset.n_embd(), m.n_embd());
  add("context_length", preset.context_length(), m.context_length());
  add("vocab_size", preset.vocab_size(), m.vocab_size());
  return joined(changed, ", ");
}

namespace {

// The memory flags' variants --describe estimates activation memory for: none, each checkpoint mode, chunked_ce, and
// full checkpointing with chunked_ce.
std::vector<std::pair<std::string, model::GPTConfig>> memory_variants(const model::GPTConfig& c) {
  auto plain = c;
  plain.checkpoint(false).chunked_ce(false);
  auto full = plain, selective = plain, chunked = plain;
  full.checkpoint(true).checkpoint_mode(model::CheckpointMode::Full);
  selective.checkpoint(true).checkpoint_mode(model::CheckpointMode::Selective);
  chunked.chunked_ce(true);
  auto both = full;
  both.chunked_ce(true);
  return {{"none", plain},
          {"checkpoint (full)", full},
          {"checkpoint (selective)", selective},
          {"chunked_ce", chunked},
          {"checkpoint (full) + chunked_ce", both}};
}

}  // namespace

std::string describe_preset(const std::string& name, const model::GPTConfig& c, int64_t seq_len, bool json, bool cuda) {
  const auto& p = model::preset(name);
  const auto variants = memory_variants(c);
  const std::string overrides = dimension_overrides(p.config, c);
  auto padded = c;
  padded.vocab_padding(true);
  const double n = static_cast<double>(c.parameter_count());
  const double flops = c.flops_per_token(seq_len);
  if (json)
    return nlohmann::json{
               {"preset", p.name},
               {"overrides", overrides.empty() ? nlohmann::json() : nlohmann::json(overrides)},
               {"n_layer", c.n_layer()},
               {"n_head", c.n_head()},
               {"n_embd", c.n_embd()},
               {"context_length", c.context_length()},
               {"vocab_size", c.vocab_size()},
               {"parameters", c.parameter_count()},
               {"parameters_vocab_padded", padded.parameter_count()},
               {"parameters_without_position_embedding", c.parameter_count() - c.position_embedding_parameters()},
               {"seq_len", seq_len},
               {"flops_per_token", flops},
               {"weight_bytes_fp32", n * 4},
               {"weight_bytes_bf16", n * 2},
               {"training_state_bytes_fp32", n * 4 * kTrainingStateCopies},
               {"activation_bytes_per_sequence_fp32",
                [&] {
                  nlohmann::json per = nlohmann::json::object();
                  for (const auto& [label, v] : variants)
                    per[label] = {{"bytes", v.activation_bytes_per_sequence(seq_len, 4, cuda)},
                                  {"hardware_flops_per_token", v.hardware_flops_per_token(seq_len)}};
                  return per;
                }()},
               {"activation_estimate_device", cuda ? "cuda" : "cpu"}}
               .dump(2) +
           "\n";
  TextTable t({{"preset " + p.name + (overrides.empty() ? "" : " with " + overrides)},
               {overrides.empty() ? p.description : "the preset: " + p.description}});
  t.add_row({"layers / heads / width", std::to_string(c.n_layer()) + " / " + std::to_string(c.n_head()) + " / " +
                                           std::to_string(c.n_embd()) + " (head dim " + std::to_string(c.head_dim()) +
                                           ")"});
  t.add_row({"context / vocabulary", std::to_string(c.context_length()) + " / " + std::to_string(c.vocab_size()) +
                                         " (" + std::to_string(padded.padded_vocab_size()) + " with vocab_padding)"});
  t.add_row({"parameters", with_commas(n) + " (" + with_commas(static_cast<double>(padded.parameter_count())) +
                               " with vocab_padding)"});
  t.add_row({"  without position embeddings",
             with_commas(static_cast<double>(c.parameter_count() - c.position_embedding_parameters()))});
  t.add_row({"FLOPs per token",
             fixed(flops / 1e9, 3) + " GFLOP at T=" + std::to_string(seq_len) + " (6N + 12*L*H*Q*T, nanoGPT)"});
  t.add_row({"weights fp32 / bf16", gib(n * 4) + " / " + gib(n * 2)});
  t.add_row({"weights+grads+AdamW fp32", gib(n * 4 * kTrainingStateCopies)});
  // GPTConfig::activation_bytes_per_sequence: what the step keeps for the backward, per sequence, by memory flag.
  t.add_row({"activations per sequence, fp32", std::string("T=") + std::to_string(seq_len) + ", estimated on " +
                                                   (cuda ? "CUDA" : "a CPU") + " (model/config.cpp)"});
  const double none = variants.front().second.activation_bytes_per_sequence(seq_len, 4, cuda);
  for (const auto& [label, v] : variants) {
    const double bytes = v.activation_bytes_per_sequence(seq_len, 4, cuda);
    const double extra = v.hardware_flops_per_token(seq_len) / flops - 1;
    t.add_row({"  " + label, gib(bytes) + (label == "none" ? "" : " (" + fixed(bytes / none, 2) + "x)") +
                                 (extra > 0 ? ", +" + fixed(100 * extra, 0) + "% FLOPs recomputed" : "")});
  }
  return t.str();
}

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
  } else {
    t.add_row({"timing",
               "warm-up " + std::to_string(s.timing.warmup) + ", >= " + std::to_string(s.timing.stop.min_steps) +
                   " steps, until noise <= " + percent(s.timing.stop.max_noise) + " or " +
                   fixed(s.timing.stop.max_time_s, 0) + " s or " + std::to_string(s.timing.stop.max_steps) + " steps"});
  }
  if (!s.lr_schedule.constant())
    t.add_row({"lr schedule", "cosine: warm-up " + std::to_string(s.lr_schedule.warmup_steps) + " steps, decay to " +
                                  fixed(s.lr_schedule.min_ratio, 2) + " x lr by step " +
                                  std::to_string(s.lr_schedule.decay_steps)});
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
  t.add_row({"bf16 / pinned / sdpa", bench::to_string(s.bf16_mode) + " / " + bench::to_string(s.pinned_mode) + " / " +
                                         model::to_string(s.model.sdpa_backend())});
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
    steps.add_row({std::to_string(c.index), c.step.label, note});
  }
  return out + steps.str();
}

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled && isatty(STDOUT_FILENO)) {
  if (const char* end = std::getenv("STEPWISE_PLAN_END"); end && *end) plan_end_ = std::atof(end);
}

std::string ProgressLine::with_time_left(std::string line) const {
  if (!plan_end_) return line;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double left = *plan_end_ - now;
  return line + "  (plan: " + (left > 0 ? fixed(left / 60, 1) + " min left" : fixed(-left / 60, 1) + " min over") + ")";
}

void ProgressLine::begin(const std::string& title) {
  title_ = title;
  if (!enabled_) return;
  std::cout << title << std::flush;
  last_width_ = title.size();
}

void ProgressLine::update(const bench::Progress& p) {
  if (!enabled_) return;
  std::string line = title_ + "  ";
  if (p.warmup) {
    line += "warm-up done";
  } else {
    line += "step " + std::to_string(p.step) + " (>= " + std::to_string(p.config->timing.stop.min_steps) + ")";
    if (p.tokens_per_s) line += "  " + with_commas(*p.tokens_per_s) + " tok/s";
    if (p.noise) line += "  noise " + percent(*p.noise);
  }
  line = with_time_left(line);
  std::cout << "\r" << line << std::string(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ')
            << std::flush;
  last_width_ = line.size();
}

void ProgressLine::update_text(const std::string& text) {
  if (!enabled_) return;
  const std::string line = with_time_left(title_ + "  " + text);
  std::cout << "\r" << line << std::string(line.size() < last_width_ ? last_width_ - line.size() : 0, ' ')
            << std::flush;
  last_width_ = line.size();
}

std::string convergence_progress(const bench::SeedRun& run, double target) {
  if (run.curve.empty()) return "warm-up";
  const auto& last = run.curve.back();
  std::string text = "step " + std::to_string(last.step) + "  val " + fixed(last.val_loss, 3) + " -> " +
                     fixed(target, 3) + "  " + fixed(last.time_s, 1) + " s";
  if (run.curve.size() >= 2) {
    const auto& before = run.curve[run.curve.size() - 2];
    const double rate = (before.val_loss - last.val_loss) / std::max(last.time_s - before.time_s, 1e-9);  // per s
    if (rate > 0 && last.val_loss > target) text += "  ~" + fixed((last.val_loss - target) / rate, 0) + " s to go";
  }
  return text;
}

std::string seed_line(const bench::SeedRun& run, double target) {
  if (run.status != "ok") return run.stop_reason + ": " + run.reason.value_or("");
  const double best =
      run.curve.empty() ? NAN : std::min_element(run.curve.begin(), run.curve.end(), [](auto& a, auto& b) {
                                  return a.val_loss < b.val_loss;
                                })->val_loss;
  if (!run.reached)
    return "did not reach " + fixed(target, 3) + " (" + run.stop_reason + "; best " + fixed(best, 3) + " after " +
           std::to_string(run.curve.empty() ? 0 : run.curve.back().step) + " steps)";
  return "reached " + fixed(target, 3) + " at step " + std::to_string(*run.steps) + " (" +
         with_commas(static_cast<double>(*run.tokens)) + " tokens) in " + fixed(*run.time_s, 1) + " s (+ " +
         fixed(run.eval_s, 1) + " s evaluating, " + fixed(run.warmup_s, 1) + " s warm-up)";
}

void ProgressLine::end() {
  if (enabled_) std::cout << "\r" << std::string(last_width_, ' ') << "\r" << std::flush;
}

std::string one_line_summary(const nlohmann::json& doc) {
  const auto& summary = doc["summary"];
  std::string reason = doc["reason"].is_string() ? doc["reason"].get<std::string>() : "";
  if (summary.is_null()) return doc["status"].get<std::string>() + (reason.empty() ? "" : ": " + reason);
  const auto& ms = summary["step_ms"];
  const auto& loss = summary["loss"];
  auto loss_text = [](const nlohmann::json& v) { return v.is_null() ? std::string("nan") : fixed(v.get<double>(), 3); };
  std::string line = with_commas(summary["tokens_per_s"].get<double>()) + " tok/s, " +
                     fixed(ms["median"].get<double>(), 1) +
                     " ms/step (n=" + std::to_string(summary["steps"].get<int>()) + ", noise " +
                     (ms["noise"].is_null() ? std::string("n/a") : percent(ms["noise"].get<double>())) +
                     (summary.value("short", false) ? ", short: --max-time before --steps" : "") + "), loss " +
                     loss_text(loss["first"]) + " -> " + loss_text(loss["last"]) + " [" +
                     loss["check"]["status"].get<std::string>() + "]";
  if (doc["status"] != "ok") line = doc["status"].get<std::string>() + ": " + reason + "; measured " + line;
  return line;
}

namespace {

std::vector<double> step_times(const nlohmann::json& doc) {
  std::vector<double> ms;
  for (const auto& s : doc["steps"]) ms.push_back(s["ms"].get<double>());
  return ms;
}

// A speedup of `doc` over `reference` (tok/s ratio) with its 95% bootstrap interval, as the report shows it; an
// interval that contains 1 is no measurable change, never a gain.
std::string speedup_cell(const nlohmann::json& doc, const nlohmann::json& reference, bool& unresolved) {
  const double ratio =
      doc["summary"]["tokens_per_s"].get<double>() / reference["summary"]["tokens_per_s"].get<double>();
  // tok/s = tokens per step / median time: the interval of the time ratio, times the tokens-per-step ratio.
  const double tokens =
      doc["summary"]["tokens_per_step"].get<double>() / reference["summary"]["tokens_per_step"].get<double>();
  const auto interval = bench::median_ratio_interval(step_times(reference), step_times(doc));
  if (!interval) return fixed(ratio, 2) + " (n<2)";
  const bench::Interval scaled{interval->low * tokens, interval->high * tokens};
  const bool flat = scaled.contains(1.0);
  unresolved = unresolved || flat;
  return fixed(ratio, 2) + " [" + fixed(scaled.low, 2) + "-" + fixed(scaled.high, 2) + "]" + (flat ? " n.s." : "");
}

std::string loss_cell(const nlohmann::json& doc) {
  const auto& loss = doc["summary"]["loss"];
  std::string cell = loss["check"]["status"].get<std::string>();
  if (loss.contains("vs_libtorch")) cell += ", vs C++ " + loss["vs_libtorch"]["status"].get<std::string>();
  return cell;
}

// The GPU held its clocks down (a power or thermal cap) at a phase edge of the row: its figures are the throttled
// GPU's.
bool throttled(const nlohmann::json& doc) {
  const auto state = doc.find("gpu_state");
  return state != doc.end() && state->is_object() && state->value("throttled", false);
}

std::string measured_cell(const nlohmann::json& doc) {
  const auto& summary = doc["summary"];
  const auto& ms = summary["step_ms"];
  std::string cell = fixed(ms["median"], 1) + " (" + fixed(ms["p10"], 1) + "-" + fixed(ms["p90"], 1) + ")";
  if (summary.value("short", false))
    cell += " short n=" + std::to_string(summary["steps"].get<int>()) +
            (ms["noise"].is_null() ? "" : " noise " + percent(ms["noise"].get<double>()));
  if (throttled(doc)) cell += " throttled";
  return cell;
}

}  // namespace

std::string results_table(const std::vector<nlohmann::json>& documents) {
  TextTable t({{"#", Align::Right},
               {"step"},
               {"change"},
               {"tok/s", Align::Right},
               {"x prev [95%]", Align::Right},
               {"x base [95%]", Align::Right},
               {"ms/step (p10-p90)", Align::Right},
               {"memory", Align::Right},
               {"MFU", Align::Right},
               {"loss"}});
  const nlohmann::json* baseline = nullptr;
  const nlohmann::json* previous = nullptr;
  std::map<int, const nlohmann::json*> engine_rows;  // suite index -> the libtorch row, for "x C++"
  bool unresolved = false, python = false, any_throttled = false;
  for (const auto& doc : documents) {
    any_throttled = any_throttled || throttled(doc);
    const std::string implementation = doc.value("implementation", "libtorch");
    const bool engine = implementation == "libtorch";
    const int index = doc["suite"].is_null() ? 0 : doc["suite"]["index"].get<int>();
    const std::string label =
        engine ? (doc["suite"].is_null() ? doc["name"].get<std::string>() : doc["suite"]["label"].get<std::string>())
               : "  " + implementation;
    const auto& summary = doc["summary"];
    if (doc["status"] != "ok" || summary.is_null()) {
      t.add_note_row({engine ? std::to_string(index) : "", label, engine ? step_change(doc) : ""},
                     doc["status"].get<std::string>() + ": " +
                         (doc["reason"].is_string() ? doc["reason"].get<std::string>() : "?"));
      continue;
    }
    const auto& mem = summary["memory"]["peak_reserved_bytes"];
    const auto& mfu = summary["mfu"]["value"];
    const std::string memory = mem.is_null() ? "-" : gib(mem.get<double>());
    const std::string mfu_cell = mfu.is_null() ? "-" : percent(mfu.get<double>());
    if (!engine) {
      // A Python row of the configuration above: its speed against stepwise's engine on the same everything.
      python = true;
      const auto it = engine_rows.find(index);
      t.add_row({"", label, "", with_commas(summary["tokens_per_s"].get<double>()), "",
                 it == engine_rows.end() ? "-" : "x C++ " + speedup_cell(doc, *it->second, unresolved),
                 measured_cell(doc), memory, mfu_cell, loss_cell(doc)});
      continue;
    }
    engine_rows[index] = &doc;
    // "x prev" is a step's gain over the step before it: meaningful only where steps accumulate.
    const bool cumulative = doc["suite"].is_null() || doc["suite"]["kind"] == "cumulative";
    const bool is_baseline = doc["suite"].is_null() || index == 0;
    if (is_baseline && !baseline) baseline = &doc;
    t.add_row({std::to_string(index), label, step_change(doc), with_commas(summary["tokens_per_s"].get<double>()),
               previous && cumulative ? speedup_cell(doc, *previous, unresolved) : "-",
               baseline && baseline != &doc ? speedup_cell(doc, *baseline, unresolved) : "-", measured_cell(doc),
               memory, mfu_cell, loss_cell(doc)});
    previous = &doc;
  }
  std::string notes;
  if (unresolved) notes += "n.s.: the 95% interval contains 1.00, so no measurable change (not a gain or a loss)\n";
  if (python)
    notes += "indented rows: PyTorch Python on the same weights and batches; x C++ is its speed over stepwise's\n";
  if (any_throttled)
    notes += "throttled: the GPU held its clocks down (power or thermal cap) during the row; gpu_state says which\n";
  return t.str() + (notes.empty() ? "" : "\n" + notes);
}

namespace {

// "275 [240-310]": a seed summary's median with its interval (the order-statistic one from six seeds, else the
// range of the seeds), as steps or seconds.
std::string median_cell(const nlohmann::json& summary, int decimals) {
  if (summary.is_null()) return "-";
  const auto value = [&](const nlohmann::json& v) {
    return decimals == 0 ? with_commas(v.get<double>()) : fixed(v.get<double>(), decimals);
  };
  std::string cell = value(summary["median"]);
  if (!summary["median_low"].is_null())
    cell += " [" + value(summary["median_low"]) + "-" + value(summary["median_high"]) + "]";
  return cell;
}

}  // namespace

std::string convergence_table(const std::vector<nlohmann::json>& documents) {
  TextTable t({{"#", Align::Right},
               {"step"},
               {"reached", Align::Right},
               {"steps to target", Align::Right},
               {"tokens", Align::Right},
               {"seconds", Align::Right},
               {"olympic s", Align::Right},
               {"x base time", Align::Right},
               {"x base steps", Align::Right},
               {"convergence"}});
  bool any = false;
  for (const auto& doc : documents) {
    if (!doc.contains("convergence") || doc["convergence"].is_null()) continue;
    any = true;
    const auto& c = doc["convergence"];
    const auto& g = c["guard"];
    // A Python row sits under its configuration's, judged against the Python baseline's seeds.
    const std::string implementation = doc.value("implementation", "libtorch");
    const bool engine = implementation == "libtorch";
    const int index = doc["suite"].is_null() ? 0 : doc["suite"]["index"].get<int>();
    const std::string label = !engine                  ? "  " + implementation
                              : doc["suite"].is_null() ? doc["name"].get<std::string>()
                                                       : doc["suite"]["label"].get<std::string>();
    const auto ratio = [](const nlohmann::json& v) {
      return v.is_null() ? std::string("-") : "x" + fixed(v.get<double>(), 2);
    };
    t.add_row(
        {engine ? std::to_string(index) : "", label,
         std::to_string(c["reached"].get<int>()) + "/" + std::to_string(c["runs"].get<int>()),
         median_cell(c["steps"], 0), median_cell(c["tokens"], 0), median_cell(c["time_s"], 1),
         c["time_s"].is_null() ? "-" : fixed(c["time_s"]["olympic_mean"].get<double>(), 1), ratio(g["time_ratio"]),
         ratio(g["steps_ratio"]),
         g["status"].get<std::string>() +
             (g["p"].is_null() || g["status"] == "baseline" ? "" : " (p " + fixed(g["p"].get<double>(), 3) + ")")});
  }
  if (!any) return "";
  return t.str() +
         "\nseconds: timed training only (evaluation, warm-up and compile apart); medians over the seeds that reached "
         "the target, [95% interval] from six seeds on; olympic: the mean without the fastest and slowest seed\n";
}

std::string sweep_table(const std::vector<std::string>& points,
                        const std::vector<std::vector<nlohmann::json>>& documents) {
  std::vector<TextTable::Column> columns{{"#", Align::Right}, {"configuration"}};
  for (const auto& p : points) columns.push_back({p, Align::Right});
  TextTable t(columns);
  // The suite's rows by index, in order, whichever points they ran at.
  std::map<int, std::string> labels;
  for (const auto& docs : documents)
    for (const auto& doc : docs)
      if (doc.value("implementation", "libtorch") == "libtorch" && !doc["suite"].is_null())
        labels.emplace(doc["suite"]["index"].get<int>(), doc["suite"]["label"].get<std::string>());
  bool unresolved = false;
  for (const auto& [index, label] : labels) {
    if (index == 0) continue;  // the baseline every cell divides by
    std::vector<std::string> row{std::to_string(index), label};
    for (const auto& docs : documents) {
      const nlohmann::json *doc = nullptr, *base = nullptr;
      for (const auto& d : docs) {
        if (d.value("implementation", "libtorch") != "libtorch" || d["suite"].is_null()) continue;
        if (d["suite"]["index"] == index) doc = &d;
        if (d["suite"]["index"] == 0) base = &d;
      }
      const auto ran = [](const nlohmann::json* d) {
        return d && (*d)["status"] == "ok" && !(*d)["summary"].is_null();
      };
      row.push_back(!doc         ? "-"
                    : !ran(doc)  ? (*doc)["status"].get<std::string>()
                    : !ran(base) ? "no baseline"
                                 : speedup_cell(*doc, *base, unresolved));
    }
    t.add_row(std::move(row));
  }
  return "x baseline [95%] at each point of the sweep (tok/s over the point's own baseline)\n" + t.str() +
         (unresolved ? "n.s.: the 95% interval contains 1.00, no measurable change.\n" : "") +
         "./report draws each configuration's speedup against the axis, with the interval as a band.\n";
}

}  // namespace stepwise::ablations
