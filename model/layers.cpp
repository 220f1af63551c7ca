// LayerNorm and tanh-GELU in both variants.
#include "model/layers.h"

#include <ATen/ATen.h>

#include <cmath>
#include <numbers>

namespace stepwise::model {

namespace {
// GPT-2's LayerNorm epsilon (nn.LayerNorm's default too).
constexpr double kLayerNormEps = 1e-5;
// The constant in GPT-2's tanh approximation of GELU.
constexpr double kGeluCubic = 0.044715;
}  // namespace

LayerNormImpl::LayerNormImpl(int64_t dim, bool native) : dim(dim), native(native) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNormImpl::forward(const at::Tensor& x) {
  if (native) return at::layer_norm(x, {dim}, weight, bias, kLayerNormEps);
  auto mean = x.mean(-1, /*keepdim=*/true);
  auto var = x.var(-1, /*unbiased=*/false, /*keepdim=*/true);  // biased, as the reference
  return weight * ((x - mean) / at::sqrt(var + kLayerNormEps)) + bias;
}

at::Tensor gelu_tanh(const at::Tensor& x, bool native) {
  if (native) return at::gelu(x, "tanh");
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + at::tanh(k * (x + kGeluCubic * at::pow(x, 3))));
}

}  // namespace stepwise::model
