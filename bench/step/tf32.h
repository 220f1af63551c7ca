// The tf32 flag's whole effect: float32 matmuls and convolutions on CUDA's TF32 tensor cores for the scope of a
// configuration. LibTorch has no RAII guard for it, and the setting is process-global, so it must be restored.
#pragma once

#include <ATen/Context.h>

#include <array>

namespace stepwise::bench {

// TF32 for CUDA float32 matmuls (cuBLAS) and convolutions (cuDNN); off means IEEE. Restores the previous setting on
// exit. It goes through the legacy switches (setAllowTF32CuBLAS/CuDNN), which write the new (backend, op) precision
// table as well, so both views agree: code that reads either one (cuBLAS handles read the new table, older paths the
// legacy flags) sees TF32, and a legacy getter never fails on a "mix of the legacy and new APIs".
class Tf32Guard {
 public:
  explicit Tf32Guard(bool tf32);
  ~Tf32Guard();
  Tf32Guard(const Tf32Guard&) = delete;
  Tf32Guard& operator=(const Tf32Guard&) = delete;

 private:
  // The CUDA precision table's entries for matmul, conv and rnn before, restored exactly.
  static constexpr std::array<at::Float32Op, 3> kOps{at::Float32Op::MATMUL, at::Float32Op::CONV, at::Float32Op::RNN};
  std::array<at::Float32Precision, 3> saved_{};
};

}  // namespace stepwise::bench
