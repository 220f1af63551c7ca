// Scoped numeric modes: TF32 matmuls and bf16 autocast (LibTorch has no RAII guard for either).
#pragma once

#include <ATen/Context.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <array>

namespace stepwise::bench {

// TF32 for CUDA float32 matmuls (cuBLAS) and convolutions (cuDNN); off means IEEE. Restores the previous setting on
// exit. It goes through the legacy switches (setAllowTF32CuBLAS/CuDNN), which write the new (backend, op) precision
// table as well, so both views agree: code that reads either one (cuBLAS handles read the new table, older paths the
// legacy flags) sees TF32, and a legacy getter never fails on a "mix of the legacy and new APIs".
class Tf32Guard {
 public:
  explicit Tf32Guard(bool enabled);
  ~Tf32Guard();
  Tf32Guard(const Tf32Guard&) = delete;
  Tf32Guard& operator=(const Tf32Guard&) = delete;

 private:
  // The CUDA precision table's entries for matmul, conv and rnn before, restored exactly.
  static constexpr std::array<at::Float32Op, 3> kOps{at::Float32Op::MATMUL, at::Float32Op::CONV, at::Float32Op::RNN};
  std::array<at::Float32Precision, 3> saved_{};
};

// Mirrors torch.autocast: save state, enable with the dtype, bump the nesting; on exit clear the cast cache
// when the outermost scope closes and restore. Run backward() outside it.
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype = c10::kBFloat16,
                bool cache_enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool active_;
  bool prev_enabled_ = false, prev_cache_ = true;
  c10::ScalarType prev_dtype_ = c10::kBFloat16;
};

}  // namespace stepwise::bench
