// fp8_linear(): dynamic scaling, the scaled matmul with its operands laid out as CUDA wants them, and the autograd
// Function whose forward and backward run the three GEMMs of a linear layer in FP8.
#include "model/fp8_linear.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
#include <torch/csrc/autograd/custom_function.h>

#include <limits>
#include <stdexcept>
#include <string>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Autocast off for a scope. Autocast lists _scaled_mm among the ops it runs in bf16, and so casts its fp32 scales to
// bf16 (measured on the CPU: a scale of 1.001 multiplies by 1.0), which would round every scale that is not a power of
// two.
using NoAutocast = c10::impl::ExcludeDispatchKeyGuard;

// torchtitan's small-GEMM thresholds (torchao float8_linear_utils._auto_filter_for_tensorwise and _for_rowwise, from
// H100 benchmarks): at or below them a layer's GEMMs are slower in FP8 than in bf16. K = in_features, N = out_features.
constexpr int64_t kTensorwiseSmallK = 4096, kTensorwiseSmallN = 1024;  // small when K <= 4096 and N <= 1024
constexpr int64_t kRowwiseSmallN = 2048, kRowwiseSmallK = 1024;        // small when N <= 2048 or K <= 1024,
constexpr int64_t kRowwiseMidN = 4096, kRowwiseMidK = 2048;            // or when N <= 4096 and K <= 2048

// The dimension an operand's scales are taken along: `dim` for rows, none for one scale per tensor.
std::optional<int64_t> along(bool rowwise, int64_t dim) { return rowwise ? std::optional<int64_t>(dim) : std::nullopt; }

// Zeros appended to `dim` of a 2-D FP8 tensor, through its bytes (a zero byte is +0 in e4m3fn and e5m2), so no FP8
// kernel is needed for the padding.
at::Tensor pad_fp8(const at::Tensor& t, int64_t dim, int64_t pad) {
  const std::vector<int64_t> pads = dim == 1 ? std::vector<int64_t>{0, pad} : std::vector<int64_t>{0, 0, 0, pad};
  return at::constant_pad_nd(t.view(at::kByte), pads, 0).view(t.scalar_type());
}

// The transpose of an FP8 tensor with its scales: (M, N) with (M, 1) or (1, N) scales -> (N, M) with (1, M) or (N, 1).
Fp8Tensor transposed(const Fp8Tensor& t) { return {t.data.t(), t.scale.dim() == 2 ? t.scale.t() : t.scale}; }

// x (M, K) @ weight (N, K)^T -> (M, N), every GEMM in FP8.
struct Fp8Matmul : torch::autograd::Function<Fp8Matmul> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, int64_t scaling) {
    const Fp8Recipe r = fp8_recipe(static_cast<Fp8Scaling>(scaling));
    // The forward's operands scaled along K, the contraction: x per row, the weight per output feature.
    const Fp8Tensor xq = to_fp8(x, r.input, along(r.rowwise, 1), r.power_of_two_scales);        // (M, K)
    const Fp8Tensor wq = to_fp8(weight, r.weight, along(r.rowwise, 1), r.power_of_two_scales);  // (N, K)
    at::Tensor out = fp8_scaled_mm(xq, transposed(wq), x.scalar_type(), r.fast_accum_output);   // (M, N)
    ctx->saved_data["scaling"] = scaling;
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    if (r.rowwise) {
      ctx->save_for_backward({x, weight});  // scaled again in the backward, along the other dimension
    } else {
      // One scale per tensor: the backward's casts of x and the weight would be these same bits, kept at one byte.
      ctx->save_for_backward({xq.data, xq.scale, wq.data, wq.scale});
    }
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    NoAutocast no_autocast(c10::autocast_dispatch_keyset);  // a backward run inside autocast's scope
    const Fp8Recipe r = fp8_recipe(static_cast<Fp8Scaling>(ctx->saved_data["scaling"].toInt()));
    const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const auto weight_dtype = static_cast<at::ScalarType>(ctx->saved_data["weight_dtype"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& grad_out = grads[0];  // (M, N)
    Fp8Tensor xq, wq;                       // x (M, K) and the weight (N, K), scaled along N and M (or per tensor)
    if (r.rowwise) {
      xq = to_fp8(saved[0], r.input, 0, r.power_of_two_scales);   // scales (1, K): along M, grad_weight's contraction
      wq = to_fp8(saved[1], r.weight, 0, r.power_of_two_scales);  // scales (1, K): along N, grad_input's contraction
    } else {
      xq = {saved[0], saved[1]};
      wq = {saved[2], saved[3]};
    }
    at::Tensor grad_x, grad_weight;
    if (ctx->needs_input_grad(0)) {
      // grad_input = grad_out @ W: (M, N) @ (N, K), grad_out scaled along N (per row).
      const Fp8Tensor gq = to_fp8(grad_out, r.grad_output, along(r.rowwise, 1), r.power_of_two_scales);
      grad_x = fp8_scaled_mm(gq, wq, x_dtype, /*fast_accum=*/false);  // (M, K)
    }
    if (ctx->needs_input_grad(1)) {
      // grad_weight = grad_out^T @ x: (N, M) @ (M, K), grad_out scaled along M (per column, so per row of its
      // transpose).
      const Fp8Tensor gq = to_fp8(grad_out, r.grad_output, along(r.rowwise, 0), r.power_of_two_scales);
      grad_weight = fp8_scaled_mm(transposed(gq), xq, weight_dtype, /*fast_accum=*/false);  // (N, K)
    }
    return {grad_x, grad_weight, at::Tensor()};
  }
};

}  // namespace

double fp8_max(at::ScalarType fp8) {
  switch (fp8) {
    case at::kFloat8_e4m3fn: return static_cast<double>(std::numeric_limits<c10::Float8_e4m3fn>::max());
    case at::kFloat8_e5m2: return static_cast<double>(std::numeric_limits<c10::Float8_e5m2>::max());
    default: throw std::invalid_argument(std::string("not an FP8 type this recipe uses: ") + c10::toString(fp8));
  }
}

Fp8Recipe fp8_recipe(Fp8Scaling scaling) {
  Fp8Recipe r{};
  r.input = r.weight = at::kFloat8_e4m3fn;
  r.fast_accum_output = true;
  if (scaling == Fp8Scaling::Rowwise) {
    r.grad_output = at::kFloat8_e4m3fn;
    r.rowwise = r.power_of_two_scales = true;
  } else {
    r.grad_output = at::kFloat8_e5m2;  // the range gradients need, at one mantissa bit less
    r.rowwise = r.power_of_two_scales = false;
  }
  return r;
}

at::Tensor fp8_scale(const at::Tensor& amax, at::ScalarType fp8, bool power_of_two) {
  const at::Tensor clamped = amax.to(at::kDouble).clamp_min(kFp8AmaxEps);
  at::Tensor scale = at::scalar_tensor(fp8_max(fp8), clamped.options()).div(clamped).to(at::kFloat);
  if (power_of_two) scale = at::exp2(at::floor(at::log2(scale)));
  return scale;
}

at::Tensor to_fp8_saturated(const at::Tensor& x, const at::Tensor& scale, at::ScalarType fp8) {
  const double m = fp8_max(fp8);
  return (x.to(at::kFloat) * scale).clamp(-m, m).to(fp8);
}

Fp8Tensor to_fp8(const at::Tensor& x, at::ScalarType fp8, std::optional<int64_t> reduce_dim, bool power_of_two) {
  const at::Tensor amax = reduce_dim ? x.abs().amax({*reduce_dim}, /*keepdim=*/true) : x.abs().max();
  const at::Tensor scale = fp8_scale(amax, fp8, power_of_two);
  return {to_fp8_saturated(x, scale, fp8), scale};
}

at::Tensor from_fp8(const Fp8Tensor& t) { return t.data.to(at::kFloat) / t.scale; }

std::pair<at::Tensor, at::Tensor> fp8_mm_layout(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor a_data = a, b_data = b;  // (M, K), (K, N)
  const int64_t pad = (kFp8Alignment - a_data.size(1) % kFp8Alignment) % kFp8Alignment;
  if (pad > 0) {  // zeros add nothing to the products
    a_data = pad_fp8(a_data, 1, pad);
    b_data = pad_fp8(b_data, 0, pad);
  }
  return {a_data.contiguous(), b_data.t().contiguous().t()};  // row-major, column-major
}

at::Tensor fp8_scaled_mm(const Fp8Tensor& a, const Fp8Tensor& b, at::ScalarType out_dtype, bool fast_accum) {
  const auto [a_data, b_data] = fp8_mm_layout(a.data, b.data);
  const at::Tensor inv_a = a.scale.reciprocal(), inv_b = b.scale.reciprocal();
  if (a.scale.dim() == 0)
    return at::_scaled_mm(a_data, b_data, inv_a, inv_b, std::nullopt, std::nullopt, out_dtype, fast_accum);
  if (fast_accum && a_data.is_cuda()) {
    // The rowwise kernel: scales (M, 1) and (1, N), a bf16 output.
    return at::_scaled_mm(a_data, b_data, inv_a.contiguous(), inv_b.contiguous(), std::nullopt, std::nullopt,
                          at::kBFloat16, /*use_fast_accum=*/true)
        .to(out_dtype);
  }
  // Unit scales through the per-tensor kernel, the fp32 product scaled per row and column after (exact: the rowwise
  // recipe's scales are powers of two).
  const at::Tensor one = at::ones({}, a.scale.options());
  return at::_scaled_mm(a_data, b_data, one, one, std::nullopt, std::nullopt, at::kFloat, fast_accum)
      .mul_(inv_a * inv_b)
      .to(out_dtype);
}

at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, Fp8Scaling scaling) {
  const c10::DeviceType device = x.device().type();
  const at::Tensor input =
      at::autocast::is_autocast_enabled(device) ? x.to(at::autocast::get_autocast_dtype(device)) : x;  // (..., K)
  const int64_t K = input.size(-1), N = weight.size(0);
  at::Tensor out;
  {
    NoAutocast no_autocast(c10::autocast_dispatch_keyset);
    out = Fp8Matmul::apply(input.reshape({-1, K}), weight, static_cast<int64_t>(scaling));  // (M, N)
  }
  std::vector<int64_t> sizes = input.sizes().vec();
  sizes.back() = N;
  out = out.view(sizes);  // (..., N)
  if (bias.defined()) out = out + bias.to(out.scalar_type());
  return out;
}

bool fp8_dims_supported(int64_t in_features, int64_t out_features) {
  return in_features % kFp8Alignment == 0 && out_features % kFp8Alignment == 0;
}

bool fp8_gemm_pays(int64_t in_features, int64_t out_features, Fp8Scaling scaling) {
  if (!fp8_dims_supported(in_features, out_features)) return false;
  const int64_t K = in_features, N = out_features;
  if (scaling == Fp8Scaling::Tensorwise) return !(K <= kTensorwiseSmallK && N <= kTensorwiseSmallN);
  return N > kRowwiseSmallN && K > kRowwiseSmallK && !(N <= kRowwiseMidN && K <= kRowwiseMidK);
}

}  // namespace stepwise::model
