// The speedrun's flags in the Python rows: bench/python's twins (model.py's rotary, qk_norm, relu2, zero_init_proj and
// logit_softcap, muon.py, lr_schedule.py's trapezoid) train the C++ engine's function. The engine's row and the
// python-eager row run from the same weights and batches, dropout on, and give the same loss at every step, warm-up
// included, to the last bit: the Python twins run the same ATen ops in the same order, as tests/e2e/
// test_python_rows.py holds the plain model's rows to.
#include "ablations/run/plan.h"
#include "ablations/run/result_document.h"
#include "bench/measure/runner.h"
#include "bench/python/python_step.h"
#include "bench/tokens.h"
#include "model/config.h"
#include "tests/support.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepwise::bench {
namespace {

// The Python row's request describes its run as a result does: the flags in effect and their options.
const std::vector<std::string> kModelFlags = {"rotary",         "qk_norm",       "relu2",
                                              "zero_init_proj", "logit_softcap", "trapezoid"};

RunConfig speedrun_run() {
  RunConfig base;
  base.preset = "tiny";
  base.model = model::preset("tiny").config;  // dropout 0.1: both sides draw the same masks
  auto c = ablations::with_flags(base, kModelFlags);
  c.model.softcap(15);
  c.batch_size = 2;
  c.seq_len = 32;
  c.adamw.lr(3e-3);
  c.timing.warmup = 3;  // the Python row's floor, so both warm up alike
  c.timing.stop.min_steps = c.timing.stop.max_steps = 6;
  c.timing.check_every = 3;
  c.lr_schedule.warmup_steps = 2;
  c.lr_schedule.decay_steps = 9;  // warm-up and measured steps: the cool-down is the last 4 (0.4 x 9, rounded)
  return c;
}

std::vector<double> all_losses(const RunResult& r) {
  std::vector<double> out;
  for (const auto& s : r.warmup) out.push_back(s.loss);
  for (const auto& s : r.steps) out.push_back(s.loss);
  return out;
}

void expect_same_losses(const RunConfig& c, const std::vector<std::string>& flags, const std::string& what) {
  const auto describe = [&](const RunConfig& run) {
    ablations::PlannedConfig planned;
    planned.effective = flags;
    planned.run = run;
    return ablations::config_json(planned);
  };
  const auto cpp = run_configuration(c, testing::gpt2_tokens());
  const auto py = run_python_configuration(c, describe, testing::gpt2_tokens(), "python-eager");
  ASSERT_EQ(cpp.status, "ok") << what << ": " << cpp.reason.value_or("");
  ASSERT_EQ(py.status, "ok") << what << ": " << py.reason.value_or("");
  const auto a = all_losses(cpp), b = all_losses(py);
  ASSERT_EQ(a.size(), 9u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i])) << what << " step " << i;
    EXPECT_EQ(b[i], a[i]) << what << " step " << i;
  }
  EXPECT_LT(a.back(), a.front()) << what << ": it learns";
}

TEST(SpeedrunPythonRows, TheModelFlagsAndTheTrapezoidTrainTheEnginesFunction) {
  expect_same_losses(speedrun_run(), kModelFlags, "reference layout, AdamW");
}

TEST(SpeedrunPythonRows, MuonTrainsTheEnginesFunctionInTheFlashLayout) {
  auto flags = kModelFlags;
  flags.insert(flags.end(), {"flash", "muon"});
  auto c = ablations::with_flags(speedrun_run(), {"flash", "muon"});
  expect_same_losses(c, flags, "flash, muon (Newton-Schulz's dtype resolved on this CPU)");
  c.muon_options.ns_dtype(MuonNsDtype::Float32).scale(MuonScale::SqrtMaxDim).lr(0.002);
  expect_same_losses(c, flags, "flash, muon (fp32 Newton-Schulz, records #4-#7's scale)");
}

}  // namespace
}  // namespace stepwise::bench
