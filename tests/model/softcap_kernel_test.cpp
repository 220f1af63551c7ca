// model/softcap_kernel.h: the fused softcap cross-entropy's row loops in every instruction set this CPU runs against
// the same math in double, the operators' argument checks, the library the Python twin loads, and what consuming the
// logits means to autograd.
#include "model/softcap_kernel.h"
#include "model/softcap.h"
#include "model/softcap_rows.h"
#include "tests/support.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::model {
namespace {

// The instruction sets whose loops this CPU can run, as ATen requires them.
std::vector<std::pair<std::string, const softcap_rows::Loops*>> runnable_loops() {
  std::vector<std::pair<std::string, const softcap_rows::Loops*>> sets{{"DEFAULT", &softcap_rows::DEFAULT::loops}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    sets.emplace_back("AVX2", &softcap_rows::AVX2::loops);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    sets.emplace_back("AVX512", &softcap_rows::AVX512::loops);
#endif
  return sets;
}

// Each set's loops on rows whose length leaves a tail after the vector lanes, against 2 c sigmoid(2 z / c), its
// log-sum-exp and the gradient g4 softmax s (1 - s) in double: within a few float32 ulps (exp_u20 is within 2).
TEST(SoftcapKernel, EveryInstructionSetComputesTheRowsOfTheMathInDouble) {
  constexpr double kCap = 15.0, kG4 = 0.25;
  constexpr int64_t V = 1031;  // a prime: a tail past any vector width
  torch::manual_seed(0);
  const auto z = 10 * at::randn({3, V}, at::kDouble);  // logits of a few caps
  const auto shifted = 2 * kCap * at::sigmoid(2 * z / kCap);
  const auto lse = at::logsumexp(shifted, 1);
  const auto s = shifted / (2 * kCap);
  const auto grad = kG4 * at::softmax(shifted, 1) * s * (1 - s);
  for (const auto& [set, loops] : runnable_loops()) {
    auto rows = z.to(at::kFloat).contiguous();
    for (int64_t r = 0; r < rows.size(0); ++r) {
      float* row = rows[r].data_ptr<float>();
      const float got = loops->shifted_cap_log_sum_exp(row, V, kCap);
      EXPECT_NEAR(got, lse[r].item<double>(), 4e-6 * lse[r].item<double>()) << set << " row " << r;
      EXPECT_TRUE(testing::all_close(rows[r], shifted[r], {0, 2 * kCap * 4 * 0x1p-23})) << set << " row " << r;
      loops->softmax_times_slope(row, V, got, kG4, kCap);
    }
    EXPECT_LT(testing::relative_error(rows, grad), 1e-5) << set;
  }
}

TEST(SoftcapKernel, TheOperatorsSayWhatTheyTake) {
  const auto targets = at::zeros({4}, at::kLong);
  const auto expect_error = [](const std::function<void()>& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one naming: " << needle;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what_without_backtrace()).find(needle), std::string::npos) << e.what_without_backtrace();
    }
  };
  at::Tensor half = at::zeros({4, 8}, at::kDouble);
  expect_error([&] { shifted_cap_cross_entropy_(half, targets, 15.0); }, "contiguous float32 logits (N, V)");
  at::Tensor strided = at::zeros({8, 4}).t();
  expect_error([&] { shifted_cap_cross_entropy_(strided, targets, 15.0); }, "contiguous float32 logits (N, V)");
  at::Tensor logits = at::zeros({4, 8});
  expect_error([&] { shifted_cap_cross_entropy_(logits, at::zeros({3}, at::kLong), 15.0); }, "int64 targets (N)");
  expect_error([&] { shifted_cap_cross_entropy_(logits, at::full({4}, 8, at::kLong), 15.0); },
               "target 8 of row 0 is outside [0, 8)");
  expect_error([&] { shifted_cap_cross_entropy_(logits, targets, 0.0); }, "the cap must be positive");
}

TEST(SoftcapKernel, ThePythonTwinsLibraryIsTheOneLoaded) {
  const std::filesystem::path library = kernels_library_path();
  EXPECT_EQ(library.filename(), "libstepwise_kernels.so");
  EXPECT_TRUE(std::filesystem::is_regular_file(library)) << library;
  EXPECT_EQ(kernels_instruction_set(), at::get_cpu_capability());
}

// The fused loss writes the shifted cap over float32 logits: a leaf is refused, and an op that saved the logits
// for its own backward fails there loudly instead of differentiating the cap's values.
TEST(SoftcapKernel, ConsumingTheLogitsIsSeenByAutograd) {
  const auto leaf = at::randn({4, 8}).requires_grad_(true);
  const auto targets = at::zeros({4}, at::kLong);
  try {
    soft_capped_cross_entropy(leaf, targets, 15.0);
    ADD_FAILURE() << "a leaf's values were overwritten";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("pass a temporary"), std::string::npos);
  }
  const auto logits = leaf.clone();
  const auto saved_by_sin = logits.sin();  // sin's backward reads its input
  const auto loss = soft_capped_cross_entropy(logits, targets, 15.0) + saved_by_sin.sum();
  EXPECT_THROW(loss.backward(), c10::Error);
}

}  // namespace
}  // namespace stepwise::model
