// The rotary flag's position encoding (RoFormer, arXiv 2104.09864; the speedrun's record #2): q and k of every head
// rotated by an angle proportional to their position, so that q . k depends on the positions only through their
// difference, and no learned position table is needed. Each head's D dimensions are split in halves, not interleaved:
// the pair (x[i], x[i + D/2]) rotates at frequency base^(-2i/D), i = 0 .. D/2 - 1; every dimension rotates.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <utility>

namespace stepwise::model {

// RoFormer's base: the slowest pair turns once per 2*pi*10000^((D-2)/D) positions.
constexpr double kRotaryBase = 10000.0;

// cos(t * w_i) and sin(t * w_i) for positions t = 0 .. T-1 and the D/2 frequencies w_i = base^(-2i/D), each (T, D/2)
// in float32 on `device`: computed in float64, so the C++ and Python models (bench/python/model.py) build the same
// bits, then rounded once.
std::pair<at::Tensor, at::Tensor> rotary_tables(int64_t T, int64_t D, const c10::Device& device);

// rotary_tables' cos and sin (T, D/2) laid out as apply_rotary multiplies by them, each (T, D): [cos, cos] and
// [sin, -sin].
std::pair<at::Tensor, at::Tensor> rotation_tables(const at::Tensor& cos, const at::Tensor& sin);

// rotation_tables of rotary_tables(T, D, device), cast to `dtype`, built once per (T, D, device, dtype) and kept for
// the process: the attention of every layer asks for them at every forward, and rebuilding them there (float64 arange,
// pow, outer, cos and sin, then the layout and the casts) is work a step repeats n_layer times for the same numbers.
// The tables are constants (no autograd), made on first use, so a CUDA graph's capture, which follows eager warm-up
// steps, only reads them. Thread-safe.
std::pair<at::Tensor, at::Tensor> cached_rotary_tables(int64_t T, int64_t D, const c10::Device& device,
                                                       at::ScalarType dtype);

// x (B, H, T, D) rotated position by position: with x1 = x[..., :D/2], x2 = x[..., D/2:],
//   y1 = x1 cos + x2 sin,   y2 = x2 cos - x1 sin,
// computed as y = x [cos, cos] + roll(x, D/2) [sin, -sin] from rotation_tables' (T, D) tables (cast to x's dtype
// first): the same products and sums, so the same bits, in four ops forward and four backward, where rotating the
// halves apart took seven forward and twelve backward, most of them fresh tensors of x's size.
at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace stepwise::model
