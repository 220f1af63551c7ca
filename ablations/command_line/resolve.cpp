// resolve_run: what the command line left open, filled from the device, the preset and the suite, in one place.
#include "ablations/command_line/resolve.h"

#include "ablations/flag_table/flags.h"
#include "ablations/run/budget_search.h"
#include "bench/device.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace stepwise::ablations {

namespace {

// Timing defaults. A GPU step is stable, so a tight noise target is cheap. A shared CPU is noisy, so its target is
// looser, and its cap keeps ./run_all.sh's four suites to minutes where a bf16 step emulated without avx512_bf16
// takes seconds (such configurations stop at the cap, marked short). Two warm-up steps suffice there: the first
// allocates, the second already runs at the steady-state footprint.
constexpr TimingDefaults kCudaTiming{5, 20, 500, 0.005, 30.0};
constexpr TimingDefaults kCpuTiming{2, 10, 100, 0.02, 5.0};
// --trace: enough steps to average kernel counts over, few enough to keep the trace small.
constexpr size_t kTraceSteps = 3;
// --count-ops: enough steps to see whether a step dispatches the same each time, each one a profiled step.
constexpr size_t kCountSteps = 3;

// The value `values` gives option `name`, or nullptr.
const std::string* value_in(const OptionValues& values, const std::string& name) {
  const auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

}  // namespace

// A CPU's default is the tiny preset: the real vocabulary and every code path, at a size where a CPU step is quick
// even where bf16 is emulated.
const TimingDefaults& timing_defaults(bool cuda) { return cuda ? kCudaTiming : kCpuTiming; }

std::string default_preset(const c10::Device& device) { return device.is_cuda() ? "gpt2-124m" : "tiny"; }

void resolve_run(Request& r, const Suite& suite) {
  auto& run = r.run;
  try {
    run.device = bench::resolve_device(r.device);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  run.preset = r.preset.value_or(default_preset(run.device));
  const auto& preset = model::preset(run.preset);
  // The preset's model with the command line's dimensions; the flags themselves are applied per configuration.
  run.model = model_with_overrides(r, preset);
  run.batch_size = r.batch_size.value_or(preset.default_batch_size);
  run.seq_len = r.seq_len.value_or(default_seq_len(preset, run.model));
  if (run.seq_len > run.model.context_length())
    throw UsageError("--seq-len " + std::to_string(run.seq_len) + " is longer than " +
                     (r.dimensions.context_length
                          ? "the context length " + std::to_string(run.model.context_length()) + " (--context-length)"
                          : "preset " + run.preset + "'s context length " + std::to_string(run.model.context_length()) +
                                " (--context-length sets another)"));

  const auto& d = timing_defaults(run.device.is_cuda());
  auto& t = run.timing;
  t.warmup = r.timing.warmup.value_or(d.warmup);
  t.stop.min_steps = r.timing.min_steps.value_or(d.min_steps);
  t.stop.max_steps = std::max(r.timing.max_steps.value_or(d.max_steps), t.stop.min_steps);
  t.stop.max_noise = r.timing.max_noise.value_or(d.max_noise);
  t.stop.max_time_s = r.timing.max_time_s.value_or(d.max_time_s);
  t.check_every = std::min<size_t>(t.check_every, t.stop.min_steps);
  run.trace_steps = r.trace ? kTraceSteps : 0;
  run.count_steps = r.count_ops ? kCountSteps : 0;
  if (r.data) run.data.path = *r.data;
  run.target = target_options(r);
  if (run.target) {
    const bool learning = std::any_of(suite.rows.begin(), suite.rows.end(), [](const SuiteRow& row) {
      return std::any_of(row.flags.begin(), row.flags.end(),
                         [](const std::string& f) { return find_flag(f)->math == MathClass::Learning; });
    });
    run.target->record_rule = learning || r.target.step_budget || r.target.record_p || r.budget_search.on;
    auto& target = *run.target;
    if (r.budget_search.on) resolve_budget_grid(r, target);
    if (const auto own = suite.step_budget.find(run.preset); !target.step_budget && own != suite.step_budget.end()) {
      target.step_budget = own->second;
      target.budget_from = "the suite's own for preset " + run.preset;
      if (*target.step_budget > target.max_steps)
        throw UsageError("suite " + suite.name + "'s own step budget " + std::to_string(*target.step_budget) +
                         " for preset " + run.preset + " is beyond the step cap " + std::to_string(target.max_steps) +
                         ": raise --max-steps, or give --step-budget");
    }
    if (r.target.record_p && !target.step_budget)
      throw UsageError(
          "--record-p sets the level of the record rule, which judges the loss at a step budget fixed before the "
          "runs: add --step-budget=N");
  }
  check_options_have_their_flags(r.flag_options, suite, r.disable);
  try {
    apply_flag_options(run, r.flag_options, suite);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  // Training to a target decays the LR as real training does (nanoGPT's cosine) over the declared horizon;
  // throughput rows keep the published tables' constant LR.
  auto& lr = run.lr_schedule;
  const auto& asked = r.lr_schedule;
  lr.kind = asked.kind.value_or(run.target ? bench::LrScheduleKind::Cosine : lr.kind);
  lr.warmup_steps = asked.warmup_steps.value_or(lr.warmup_steps);
  lr.min_ratio = asked.min_ratio.value_or(lr.min_ratio);
  // The trapezoid flag sets the schedule per configuration (its cool-down is its option, set above).
  const bool a_row_has_trapezoid = some_row_runs(suite, "trapezoid");
  if (run.target) {
    resolve_horizon(*run.target, lr, asked, a_row_has_trapezoid);
  } else {
    // A throughput row's decay ends at the last step it can take, unless told otherwise.
    lr.decay_steps = asked.decay_steps.value_or(t.warmup + static_cast<int64_t>(t.stop.max_steps));
  }
  if (lr.kind == bench::LrScheduleKind::Constant && (asked.warmup_steps || asked.decay_steps || asked.min_ratio))
    throw UsageError(
        "--lr-warmup-steps, --lr-decay-steps and --lr-min-ratio shape --lr-schedule=cosine or "
        "trapezoid; add one");
}

void resolve_budget_grid(Request& r, bench::TargetOptions& target) {
  auto& b = r.budget_search;
  const bool capped = r.timing.max_steps.has_value();
  if (b.grid.empty()) {
    if (!b.last && !capped)
      throw UsageError("--find-budget needs the grid's bound: give --max-steps (the grid ends there) or --budget-last");
    const int64_t last = b.last.value_or(target.max_steps);
    if (last > target.max_steps)
      throw UsageError("--budget-last=" + std::to_string(last) + " must lie within --max-steps=" +
                       std::to_string(target.max_steps) + ": every seed must be able to train all of it");
    const int64_t first = std::min(b.first.value_or(kBudgetFirst), last);
    const double ratio = b.ratio.value_or(kBudgetRatio);
    try {
      b.resolved = geometric_grid(first, ratio, last);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::ostringstream from;
    from << "geometric from " << first << " at ratio " << ratio << " to " << last << " ("
         << (b.last ? "--budget-last" : "--max-steps") << ")";
    b.resolved_from = from.str();
  } else {
    if (b.grid.back() > target.max_steps)
      throw UsageError("--budget-grid's last budget " + std::to_string(b.grid.back()) + " is beyond --max-steps=" +
                       std::to_string(target.max_steps) + ": every seed must be able to train all of it");
    b.resolved = b.grid;
    b.resolved_from = "--budget-grid";
  }
  // The schedules are resolved on the grid's longest budget; each probe then ends its own at its budget.
  target.step_budget = b.resolved.back();
  target.budget_from = "the budget search's longest budget; each probe ends at its own";
}

void check_options_have_their_flags(const OptionValues& command_line, const Suite& suite,
                                    const std::vector<std::string>& disabled) {
  for (const auto* flag : flag_table()) {
    const bool out = std::find(disabled.begin(), disabled.end(), flag->name) != disabled.end();
    if (some_row_runs(suite, flag->name) && !out) continue;
    for (const auto& o : flag->options)
      if (command_line.contains(o.name) && !o.acts_while_off)
        throw UsageError(
            o.cli_name() + " is an option of the " + std::string(flag->name) + " flag, which " +
            (out ? "--disable takes out of every configuration of this run" : "no configuration of this run enables") +
            ": add --enable=" + std::string(flag->name) +
            (suite.name == "single" ? "" : " (or run a suite that has it)") + ", or drop " + o.cli_name());
  }
}

void resolve_horizon(bench::TargetOptions& target, bench::LrSchedule& lr, const Request::LrSchedule& asked,
                     bool a_row_has_trapezoid) {
  const bool decays = lr.kind != bench::LrScheduleKind::Constant || a_row_has_trapezoid;
  if (const auto n = target.step_budget) {
    if (asked.decay_steps && *asked.decay_steps != *n)
      throw UsageError("--lr-decay-steps " + std::to_string(*asked.decay_steps) + " is not the horizon " +
                       std::to_string(*n) + " (" + target.budget_from +
                       "): a target run's schedule ends where every seed stops; drop --lr-decay-steps");
    lr.decay_steps = *n;
    return;
  }
  if (!decays) return;
  // Asked for in so many words (a schedule, its shape, or a trapezoid row): without a horizon it would end at the
  // step cap, which the seeds stop long before, so the rows would train at a rate the schedule never meant.
  const bool asked_for =
      asked.kind || asked.warmup_steps || asked.decay_steps || asked.min_ratio || a_row_has_trapezoid;
  if (asked_for)
    throw UsageError(std::string(a_row_has_trapezoid ? "the trapezoid flag's schedule"
                                                     : "--lr-schedule=" + bench::to_string(lr.kind)) +
                     " decays over the run's length, and a target run's length must be declared: add "
                     "--step-budget=N (every seed trains to N, its schedule ends there, the record rule judges the "
                     "loss there), or --lr-schedule=constant");
  // The stated default, printed in the startup table and recorded in the result (target.budget_from).
  lr.kind = bench::LrScheduleKind::Constant;
  target.budget_from =
      "none declared (--step-budget), so the learning rate stays constant: a cosine would decay over the step cap, "
      "which the seeds stop long before";
}

void apply_flag_options(bench::RunConfig& run, const OptionValues& command_line, const Suite& suite) {
  const auto kind = suite.device_options.find(run.device.is_cuda() ? "cuda" : "cpu");
  for (const auto* flag : flag_table())
    for (const auto& o : flag->options) {
      const std::string* value = value_in(command_line, o.name);
      if (!value && kind != suite.device_options.end()) value = value_in(kind->second, o.name);
      if (!value) value = value_in(suite.options, o.name);
      if (!value && !o.default_value.empty()) value = &o.default_value;
      if (value) o.set(run, *value);
    }
}

std::optional<bench::TargetOptions> target_options(const Request& r) {
  const auto& asked = r.target;
  if (!asked.loss) {
    if (asked.eval_every) throw UsageError("--eval-every is for time to a target loss: add --target-loss");
    if (asked.eval_batches) throw UsageError("--eval-batches is for time to a target loss: add --target-loss");
    if (asked.seeds)
      throw UsageError("--target-seeds (or its old name --seeds) is for time to a target loss: add --target-loss");
    if (asked.step_budget) throw UsageError("--step-budget is for time to a target loss: add --target-loss");
    if (asked.record_p) throw UsageError("--record-p is for time to a target loss: add --target-loss");
    return std::nullopt;
  }
  bench::TargetOptions o;
  o.loss = *asked.loss;
  o.seeds = asked.seeds.value_or(o.seeds);
  o.eval_every = asked.eval_every.value_or(o.eval_every);
  o.eval_batches = asked.eval_batches.value_or(o.eval_batches);
  // Given, --max-steps and --max-time cap each seed's training, as resolve_run settled them.
  o.max_steps = r.timing.max_steps ? static_cast<int64_t>(r.run.timing.stop.max_steps) : kTargetMaxSteps;
  o.max_time_s = r.timing.max_time_s      ? r.run.timing.stop.max_time_s
                 : r.run.device.is_cuda() ? kTargetMaxTimeCudaS
                                          : kTargetMaxTimeCpuS;
  o.warmup_steps = r.run.timing.warmup;
  o.step_budget = asked.step_budget;
  o.budget_from = o.step_budget ? "--step-budget" : "none declared";
  o.record_p = asked.record_p.value_or(o.record_p);
  if (o.step_budget && *o.step_budget > o.max_steps)
    throw UsageError("--step-budget " + std::to_string(*o.step_budget) + " is beyond the step cap " +
                     std::to_string(o.max_steps) + ": a seed must be able to reach the budget (raise --max-steps)");
  return o;
}

model::GPTConfig model_with_overrides(const Request& r, const model::Preset& preset) {
  auto m = preset.config;
  const auto& given = r.dimensions;
  if (given.n_layer) m.n_layer(*given.n_layer);
  if (given.n_head) m.n_head(*given.n_head);
  if (given.n_embd) m.n_embd(*given.n_embd);
  if (given.context_length) m.context_length(*given.context_length);
  if (given.vocab_size) m.vocab_size(*given.vocab_size);
  if (given.dropout) m.dropout(*given.dropout);
  if (m.n_embd() % m.n_head() != 0) {
    const auto named = [&](const char* option, const char* field, int64_t v, bool from_command_line) {
      return std::string(field) + " " + std::to_string(v) + " (" +
             (from_command_line ? std::string(option) : "preset " + preset.name + "'s") + ")";
    };
    throw UsageError(named("--n-head", "n_head", m.n_head(), given.n_head.has_value()) + " must divide " +
                     named("--n-embd", "n_embd", m.n_embd(), given.n_embd.has_value()) +
                     ": each head gets n_embd / n_head channels");
  }
  try {
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("model: ") + e.what());
  }
  return m;
}

int64_t default_seq_len(const model::Preset& preset, const model::GPTConfig& model) {
  return std::min(preset.default_seq_len, model.context_length());
}

void take_data_vocabulary(Request& r, const bench::TokenSource& source) {
  if (!source.vocab_size) return;
  auto& model = r.run.model;
  const auto& p = source.provenance;
  if (!r.dimensions.vocab_size) {
    model.vocab_size(*source.vocab_size);
    return;
  }
  if (model.vocab_size() < *source.vocab_size)
    throw UsageError("--vocab-size " + std::to_string(model.vocab_size()) + " is smaller than the data's vocabulary " +
                     std::to_string(*source.vocab_size) + " (declared in its " +
                     p.value("vocab_source", std::string("meta.json")) +
                     "): its token ids would not fit; drop --vocab-size to take the data's");
}

}  // namespace stepwise::ablations
