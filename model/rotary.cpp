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

std::pair<at::Tensor, at::Tensor> cached_rotary_tables(int64_t T, int64_t D, const c10::Device& device,
                                                       at::ScalarType dtype) {
  using Key = std::tuple<int64_t, int64_t, c10::DeviceType, c10::DeviceIndex, at::ScalarType>;
  static std::mutex mutex;
  // Never destroyed: a CUDA table freed during static destruction could outlive the CUDA runtime.
  static auto* cache = new std::map<Key, std::pair<at::Tensor, at::Tensor>>();
  const Key key{T, D, device.type(), device.index(), dtype};
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = cache->find(key); found != cache->end()) return found->second;
  const auto [cos, sin] = rotary_tables(T, D, device);  // (T, D/2) each, float32
  return cache->emplace(key, std::pair{cos.to(dtype), sin.to(dtype)}).first->second;
}

at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor c = cos.to(x.scalar_type()), s = sin.to(x.scalar_type());  // (T, D/2), broadcast over (B, H)
  // (B, H, T, D/2) each, sliced as Python's x[..., :half] and x[..., half:] are: narrow would dispatch aten::narrow,
  // then the same aten::slice.
  const at::Tensor x1 = x.slice(-1, 0, half), x2 = x.slice(-1, half);
  const at::Tensor y1 = x1 * c + x2 * s;
  const at::Tensor y2 = x2 * c - x1 * s;
  return at::cat({y1, y2}, -1);  // (B, H, T, D)
}

}  // namespace stepwise::model
