// softcap_kernel.h's operators, the logit_softcap flag's loss on a CPU: argument checks, rows spread over ATen's
// thread pool, the loops of the instruction set ATen runs (model/softcap_rows.h), and the registration under the
// dispatcher's namespace `stepwise`.
#include "model/softcap_kernel.h"

#include "model/softcap.h"
#include "model/softcap_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/library.h>

#include <dlfcn.h>

namespace stepwise::model {

namespace {

const softcap_rows::Loops& loops() {
  static const softcap_rows::Loops& chosen = []() -> const softcap_rows::Loops& {
    const std::string set = kernels_instruction_set();
#ifndef STEPWISE_ROWS_DEFAULT_ONLY
    if (set == "AVX512") return softcap_rows::AVX512::loops;
    if (set == "AVX2") return softcap_rows::AVX2::loops;
#endif
    return softcap_rows::DEFAULT::loops;
  }();
  return chosen;
}

void check(const at::Tensor& logits, const at::Tensor& targets, double cap) {
  TORCH_CHECK(logits.device().is_cpu() && targets.device().is_cpu(),
              "stepwise::shifted_cap_cross_entropy_ is a CPU kernel, got logits on ", logits.device());
  TORCH_CHECK(logits.dim() == 2 && logits.scalar_type() == at::kFloat && logits.is_contiguous(),
              "stepwise::shifted_cap_cross_entropy_ takes contiguous float32 logits (N, V), got ", logits.scalar_type(),
              " ", logits.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.scalar_type() == at::kLong && targets.size(0) == logits.size(0) &&
                  targets.is_contiguous(),
              "stepwise::shifted_cap_cross_entropy_ takes int64 targets (N) for logits (N, V), got ",
              targets.scalar_type(), " ", targets.sizes());
  TORCH_CHECK(cap > 0, "stepwise::shifted_cap_cross_entropy_: the cap must be positive, got ", cap);
  const int64_t V = logits.size(1);
  const int64_t* target = targets.data_ptr<int64_t>();
  for (int64_t r = 0; r < targets.size(0); ++r)
    TORCH_CHECK(target[r] >= 0 && target[r] < V, "stepwise::shifted_cap_cross_entropy_: target ", target[r], " of row ",
                r, " is outside [0, ", V, ")");
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> shifted_cap_cross_entropy_(at::Tensor& logits, const at::Tensor& targets,
                                                              double cap) {
  check(logits, targets, cap);
  const int64_t N = logits.size(0), V = logits.size(1);
  at::Tensor lse = at::empty({N}, logits.options());  // (N)
  at::Tensor nll = at::empty({N}, logits.options());  // (N): each row's loss
  float* rows = logits.data_ptr<float>();
  float* lse_of = lse.data_ptr<float>();
  float* nll_of = nll.data_ptr<float>();
  const int64_t* target = targets.data_ptr<int64_t>();
  const auto& run = loops();
  at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = rows + r * V;
      lse_of[r] = run.shifted_cap_log_sum_exp(row, V, static_cast<float>(cap));
      nll_of[r] = lse_of[r] - row[target[r]];
    }
  });
  return {nll.mean(), lse};
}

void shifted_cap_cross_entropy_backward_(at::Tensor& shifted, const at::Tensor& lse, const at::Tensor& targets,
                                         const at::Tensor& grad, double cap) {
  check(shifted, targets, cap);
  const int64_t N = shifted.size(0), V = shifted.size(1);
  TORCH_CHECK(lse.scalar_type() == at::kFloat && lse.numel() == N && lse.is_contiguous(),
              "stepwise::shifted_cap_cross_entropy_backward_ takes the forward's log-sum-exp (N)");
  TORCH_CHECK(grad.numel() == 1, "stepwise::shifted_cap_cross_entropy_backward_ takes the mean loss's gradient");
  // The mean's share of the loss's gradient for each row, times the cap's slope.
  const float g4 = static_cast<float>(grad.item<double>() * kShiftedCapSlope / static_cast<double>(N));
  float* rows = shifted.data_ptr<float>();
  const float* lse_of = lse.data_ptr<float>();
  const int64_t* target = targets.data_ptr<int64_t>();
  const float half_over_cap = static_cast<float>(0.5 / cap);
  const auto& run = loops();
  at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = rows + r * V;
      const float s = row[target[r]] * half_over_cap;  // the target's sigmoid, before the loop overwrites it
      run.softmax_times_slope(row, V, lse_of[r], g4, static_cast<float>(cap));
      row[target[r]] -= g4 * s * (1.0f - s);  // - onehot
    }
  });
}

std::string kernels_library_path() {
  Dl_info info{};
  TORCH_CHECK(dladdr(reinterpret_cast<const void*>(&kernels_library_path), &info) != 0 && info.dli_fname != nullptr,
              "libstepwise_kernels: dladdr found no file for the library");
  return info.dli_fname;
}

std::string kernels_instruction_set() { return at::get_cpu_capability(); }

TORCH_LIBRARY(stepwise, m) {
  m.def("shifted_cap_cross_entropy_(Tensor(a!) logits, Tensor targets, float cap) -> (Tensor, Tensor)");
  m.def(
      "shifted_cap_cross_entropy_backward_(Tensor(a!) shifted, Tensor lse, Tensor targets, Tensor grad, float cap)"
      " -> ()");
}

// Shapes only, for the Python twin under torch.compile: its tracer runs the graph on fake tensors, through these.
std::tuple<at::Tensor, at::Tensor> shifted_cap_cross_entropy_meta(at::Tensor& logits, const at::Tensor& targets,
                                                                  double cap) {
  return {at::empty({}, logits.options()), at::empty({logits.size(0)}, logits.options())};
}

void shifted_cap_cross_entropy_backward_meta(at::Tensor& shifted, const at::Tensor& lse, const at::Tensor& targets,
                                             const at::Tensor& grad, double cap) {}

TORCH_LIBRARY_IMPL(stepwise, Meta, m) {
  m.impl("shifted_cap_cross_entropy_", &shifted_cap_cross_entropy_meta);
  m.impl("shifted_cap_cross_entropy_backward_", &shifted_cap_cross_entropy_backward_meta);
}

TORCH_LIBRARY_IMPL(stepwise, CPU, m) {
  m.impl("shifted_cap_cross_entropy_", &shifted_cap_cross_entropy_);
  m.impl("shifted_cap_cross_entropy_backward_", &shifted_cap_cross_entropy_backward_);
}

}  // namespace stepwise::model
