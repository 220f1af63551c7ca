// rotary_tables and apply_rotary: the rotary flag's angles and rotation, called by the attention for q and k.
#include "model/rotary.h"

#include <ATen/ATen.h>

#include <map>
#include <mutex>
#include <tuple>

namespace stepwise::model {

std::pair<at::Tensor, at::Tensor> rotary_tables(int64_t T, int64_t D, const c10::Device& device) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  const at::Tensor exponent = at::arange(0, D / 2, f64) * (-2.0 / static_cast<double>(D));  // (D/2): -2i/D
  const at::Tensor frequency = at::pow(kRotaryBase, exponent);                              // (D/2)
  const at::Tensor angle = at::outer(at::arange(0, T, f64), frequency);                     // (T, D/2): t w_i
  return {at::cos(angle).to(at::kFloat), at::sin(angle).to(at::kFloat)};
}

std::pair<at::Tensor, at::Tensor> rotation_tables(const at::Tensor& cos, const at::Tensor& sin) {
  return {at::cat({cos, cos}, -1), at::cat({sin, -sin}, -1)};  // (T, D) each
}

std::pair<at::Tensor, at::Tensor> cached_rotary_tables(int64_t T, int64_t D, const c10::Device& device,
                                                       at::ScalarType dtype) {
  using Key = std::tuple<int64_t, int64_t, c10::DeviceType, c10::DeviceIndex, at::ScalarType>;
  static std::mutex mutex;
  // Never destroyed: a CUDA table freed during static destruction could outlive the CUDA runtime.
  static auto* cache = new std::map<Key, std::pair<at::Tensor, at::Tensor>>();
  const Key key{T, D, device.type(), device.index(), dtype};
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = cache->find(key); found != cache->end()) return found->second;
  const auto [cos, sin] = std::apply(rotation_tables, rotary_tables(T, D, device));  // (T, D) each, float32
  return cache->emplace(key, std::pair{cos.to(dtype), sin.to(dtype)}).first->second;
}

at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor c = cos.to(x.scalar_type()), s = sin.to(x.scalar_type());  // (T, D), broadcast over (B, H)
  // x times cos first, as Python evaluates left to right: the order the two products are recorded in is the order
  // backward sums their gradients into x's (C++ leaves the operands of `+` unsequenced).
  const at::Tensor turned = x * c;  // (x1 cos, x2 cos)
  // roll(x, D/2) is (x2, x1): its product with (sin, -sin) is (x2 sin, -x1 sin).
  return turned + at::roll(x, {x.size(-1) / 2}, {-1}) * s;  // (B, H, T, D)
}

}  // namespace stepwise::model
