// The logit softcap fused with the cross-entropy as one CPU kernel (issue 57): the two operators
// stepwise::shifted_cap_cross_entropy_ and its backward, registered with PyTorch's dispatcher in the shared library
// libstepwise_kernels, so the C++ step calls them as it calls ATen's and the Python twin loads the same library
// (torch.ops.load_library) and calls the same code. ATen's ops made a (N, V) tensor and a pass over it for every
// step of the cap and of the log-softmax; the kernel makes none and reads each row of logits from memory once forward
// and once backward (the rest of its passes read the row from cache).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <tuple>

namespace stepwise::model {

// The float32 logits (N, V), contiguous, become their shifted cap 2 cap sigmoid(2 logits / cap) in place; returns the
// mean over rows of the shifted cap's cross-entropy against targets (N), a float32 scalar, and each row's log-sum-exp
// (N) for the backward. A CPU kernel: the logits must be on a CPU.
std::tuple<at::Tensor, at::Tensor> shifted_cap_cross_entropy_(at::Tensor& logits, const at::Tensor& targets,
                                                              double cap);

// The logits' gradient, written over the forward's shifted cap (returning nothing, so that torch.compile's
// functionalisation takes the operator): `grad` is the mean loss's gradient (a scalar), lse
// the forward's. (softmax - onehot) grad / N times the cap's slope 4 s (1 - s), s = shifted / (2 cap).
void shifted_cap_cross_entropy_backward_(at::Tensor& shifted, const at::Tensor& lse, const at::Tensor& targets,
                                         const at::Tensor& grad, double cap);

// Where libstepwise_kernels lies on this machine: the Python twin's library to load (STEPWISE_KERNELS).
std::string kernels_library_path();

// The instruction set the kernel's loops run in: ATen's own choice (at::get_cpu_capability, so ATEN_CPU_CAPABILITY
// moves both).
std::string kernels_instruction_set();

}  // namespace stepwise::model
