// The fp8 flag's linear layer: y = x W^T with its three GEMMs (the forward, grad_input, grad_weight) as FP8 scaled
// matmuls through at::_scaled_mm, scaled dynamically (each operand's amax taken every step), as torchao's Float8Linear
// recipes do (torchao/float8/config.py, float8_linear.py, float8_scaling_utils.py, float8_ops.py):
//
//   tensorwise (default): one scale per tensor; input and weight in e4m3, the output's gradient in e5m2 (its range);
//                         fast accumulation in the forward's GEMM only.
//   rowwise:              one scale per row along each GEMM's contraction dimension, rounded down to a power of two;
//                         e4m3 for every operand, gradients included. The forward's GEMM runs the rowwise kernel
//                         with fast accumulation; the backward's run the tensorwise kernel with unit scales and apply
//                         the row scales to its fp32 output, as torchao does (the rowwise kernel is slow without fast
//                         accumulation).
//
// A scale maps a tensor onto the FP8 range: scale = max_fp8 / amax (amax clamped away from 0), data = saturate(x *
// scale); _scaled_mm takes the inverse scales and computes (a / scale_a) @ (b / scale_b), accumulated in fp32.
//
// On the CPU (torch 2.11, measured by tests/model/fp8_linear_test.cpp): at::_scaled_mm runs with per-tensor scales
// (e4m3 and e5m2, any layout and size, fp32 or bf16 output, the fp32 product rounded once), and refuses row scales (an
// internal assert: "only supports per-tensor scaling for CPU backend"). So the CPU runs the same calls as CUDA: the
// tensorwise recipe as on a GPU, and rowwise always on the unit-scale path above. CUDA adds the hardware's
// constraints (compute capability >= 8.9; the first operand row-major, the second column-major; the contraction and
// output dimensions multiples of 16; row scales as (M, 1) and (1, N) fp32; a rowwise output in bf16): the operands are
// laid out so on every device, and a contraction over rows (grad_weight's B*T) is padded with zeros to a multiple
// of 16.
#pragma once

#include "model/config.h"

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace stepwise::model {

// _scaled_mm's alignment: the contraction and output dimensions must be multiples of this on CUDA (cuBLASLt's 16-byte
// alignment of one-byte elements).
constexpr int64_t kFp8Alignment = 16;
// torchao's floor on amax (float8_utils.EPS), so an all-zero tensor gets a finite scale.
constexpr double kFp8AmaxEps = 1e-12;

// The largest finite value of an FP8 type: 448 (e4m3fn), 57344 (e5m2).
double fp8_max(at::ScalarType fp8);

// What one recipe casts each operand to, and how.
struct Fp8Recipe {
  at::ScalarType input, weight, grad_output;  // FP8 types of the GEMMs' operands
  bool rowwise;                               // scales per row along the contraction, else one per tensor
  bool power_of_two_scales;                   // scales rounded down to a power of two (torchao's rowwise recipe)
  bool fast_accum_output;                     // the forward's GEMM with fast accumulation (grad GEMMs never)
};
Fp8Recipe fp8_recipe(Fp8Scaling scaling);

// An FP8 tensor and the scale it was cast with: data = saturate(hp * scale), so hp ~ data / scale. scale is float32,
// () for a tensor, or the amax's shape with the reduced dimension kept ((M, 1) or (1, N)) for rows.
struct Fp8Tensor {
  at::Tensor data;
  at::Tensor scale;
};

// max_fp8 / max(amax, kFp8AmaxEps), in float64 then float32 (as torchao), optionally rounded down to a power of two.
at::Tensor fp8_scale(const at::Tensor& amax, at::ScalarType fp8, bool power_of_two);
// x * scale in float32, clamped to +-max_fp8 and cast (a cast alone turns an overflow into NaN or inf in torch 2.11).
at::Tensor to_fp8_saturated(const at::Tensor& x, const at::Tensor& scale, at::ScalarType fp8);
// Dynamic scaling: the amax of the whole tensor (reduce_dim = nullopt) or of each slice along reduce_dim (kept as
// size 1), the scale from it, the saturated cast.
Fp8Tensor to_fp8(const at::Tensor& x, at::ScalarType fp8, std::optional<int64_t> reduce_dim, bool power_of_two);
// data / scale in float32.
at::Tensor from_fp8(const Fp8Tensor& t);

// FP8 operands a (M, K) and b (K, N) as CUDA's _scaled_mm takes them: a row-major, b column-major, K padded with zeros
// to a multiple of kFp8Alignment.
std::pair<at::Tensor, at::Tensor> fp8_mm_layout(const at::Tensor& a, const at::Tensor& b);

// (a.data / a.scale) @ (b.data / b.scale), a (M, K), b (K, N), in out_dtype: at::_scaled_mm with the inverse scales,
// the operands laid out and K padded as CUDA requires. Row scales take the rowwise kernel with fast_accum, and
// otherwise (and always on the CPU) the unit-scale kernel in fp32 with the scales applied to its output.
at::Tensor fp8_scaled_mm(const Fp8Tensor& a, const Fp8Tensor& b, at::ScalarType out_dtype, bool fast_accum);

// x (..., K) @ weight (N, K)^T (+ bias (N)) -> (..., N), the GEMMs in FP8 as `scaling`'s recipe says, in a
// torch::autograd::Function whose backward runs grad_input = grad_out @ W and grad_weight = grad_out^T @ x as scaled
// matmuls too. The output is in x's dtype, or autocast's when autocast is on for x's device (x is cast to it, as
// autocast casts a linear's input), and the Function runs with autocast off (which would round its scales); the bias is
// added after the GEMM in the output's dtype, as torchao's Float8Linear adds it. Gradients come back in x's and the
// weight's dtypes.
at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Fp8Scaling scaling);

// Whether _scaled_mm takes a linear of these sizes at all: both multiples of kFp8Alignment.
bool fp8_dims_supported(int64_t in_features, int64_t out_features);
// torchtitan's small-GEMM filter (--quantize.linear.float8.filter_fqns=auto_filter_small_kn, which calls torchao's
// float8_linear_utils._auto_filter_for_recipe): from H100 benchmarks of one linear's forward and backward, a layer with
// K = in_features, N = out_features is only converted when FP8 is faster, which needs
//   tensorwise: not (K <= 4096 and N <= 1024);
//   rowwise:    N > 2048 and K > 1024 and not (N <= 4096 and K <= 2048).
// Also false where fp8_dims_supported is. At GPT-2 124M (C = 768), tensorwise keeps the fused QKV (768 -> 2304), the
// MLP's c_fc (768 -> 3072) and a padded head (768 -> 50304); rowwise keeps none.
bool fp8_gemm_pays(int64_t in_features, int64_t out_features, Fp8Scaling scaling);

}  // namespace stepwise::model
