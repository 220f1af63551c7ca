// checkpointed() and linears_of_recomputed(): two torch::autograd::Functions, with what both need to run a forward
// again in the backward exactly as it ran the first time (the autocast state, and the generators' states:
// model/generator_states.h).
#include "model/recompute.h"

#include "model/generator_states.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <optional>

namespace stepwise::model {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ---------------------------------------------------------------- the forward's state, restored for its recompute

// Autocast for one device type, as torch.utils.checkpoint records it (_get_autocast_kwargs).
struct AutocastState {
  c10::DeviceType device;
  bool enabled;
  at::ScalarType dtype;
  bool cache_enabled;

  static AutocastState of(c10::DeviceType device) {
    return {device, at::autocast::is_autocast_enabled(device), at::autocast::get_autocast_dtype(device),
            at::autocast::is_autocast_cache_enabled()};
  }
};

// torch.amp.autocast(device_type, enabled, dtype, cache_enabled) as a scope: set, nest, and on exit clear the cast
// cache when the outermost scope closes, then restore.
class AutocastScope {
 public:
  explicit AutocastScope(const AutocastState& s) : previous_(AutocastState::of(s.device)) {
    at::autocast::set_autocast_enabled(s.device, s.enabled);
    at::autocast::set_autocast_dtype(s.device, s.dtype);
    at::autocast::set_autocast_cache_enabled(s.cache_enabled);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(previous_.device, previous_.enabled);
    at::autocast::set_autocast_dtype(previous_.device, previous_.dtype);
    at::autocast::set_autocast_cache_enabled(previous_.cache_enabled);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  AutocastState previous_;
};

// What a Function's backward needs besides tensors, kept in its context as a capsule.
struct Segment : torch::CustomClassHolder {
  TensorFn fn;
  AutocastState device_autocast{}, cpu_autocast{};
  std::optional<GeneratorStates> generators;  // checkpointed() with preserve_rng
  std::vector<bool> has_bias;                 // linears_of_recomputed(): per layer
};

c10::intrusive_ptr<Segment> segment_of(AutogradContext* ctx) {
  return c10::static_intrusive_pointer_cast<Segment>(ctx->saved_data["segment"].toCapsule());
}

// Runs the segment's function on a detached copy of x under the forward's autocast states (device, then CPU, as
// torch.utils.checkpoint nests them), with grad mode on. Returns (x's copy, the output).
std::pair<at::Tensor, at::Tensor> recompute(const Segment& s, const at::Tensor& x) {
  at::Tensor input = x.detach();
  input.requires_grad_(x.requires_grad());
  torch::AutoGradMode grad_mode(true);
  AutocastScope device(s.device_autocast);
  AutocastScope cpu(s.cpu_autocast);
  return {input, s.fn(input)};
}

// ---------------------------------------------------------------- full: a whole block

struct Checkpointed : torch::autograd::Function<Checkpointed> {
  static variable_list forward(AutogradContext* ctx, c10::intrusive_ptr<Segment> s, const at::Tensor& x) {
    s->device_autocast = AutocastState::of(x.device().type());
    s->cpu_autocast = AutocastState::of(c10::kCPU);
    at::Tensor out = s->fn(x);  // grad mode is off here: nothing inside is kept
    ctx->save_for_backward({x});
    ctx->saved_data["segment"] = at::IValue::make_capsule(std::move(s));
    return {out};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = segment_of(ctx);
    at::Tensor input, out;
    {
      std::optional<ForkedGenerators> fork;
      if (s->generators) fork.emplace(*s->generators);
      std::tie(input, out) = recompute(*s, ctx->get_saved_variables()[0]);
    }
    if (out.requires_grad()) torch::autograd::backward({out}, {grads[0]});
    return {at::Tensor(), input.grad()};
  }
};

// ---------------------------------------------------------------- selective: a LayerNorm or the GELU, then linears

struct RecomputedLinears : torch::autograd::Function<RecomputedLinears> {
  // params: each layer's weight, then its bias when it has one.
  static variable_list forward(AutogradContext* ctx, c10::intrusive_ptr<Segment> s, const at::Tensor& x,
                               at::TensorList params) {
    s->device_autocast = AutocastState::of(x.device().type());
    s->cpu_autocast = AutocastState::of(c10::kCPU);
    const at::Tensor a = s->fn(x);
    variable_list out;
    size_t p = 0;
    for (const bool bias : s->has_bias) {
      const at::Tensor& weight = params[p++];
      out.push_back(at::linear(a, weight, bias ? params[p++] : at::Tensor()));
    }
    variable_list saved{x};
    saved.insert(saved.end(), params.begin(), params.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["segment"] = at::IValue::make_capsule(std::move(s));
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = segment_of(ctx);
    const auto saved = ctx->get_saved_variables();
    auto [input, a] = recompute(*s, saved[0]);
    // What autocast did to the linear's operands in the forward: cast them to its dtype (a no-op for one already in
    // it); the gradients are cast back as autograd's ToCopyBackward does.
    const bool cast = s->device_autocast.enabled;
    const auto as_run = [&](const at::Tensor& t) { return cast ? t.to(s->device_autocast.dtype) : t; };
    const at::Tensor a_run = as_run(a.detach());
    const at::Tensor a2 = a_run.reshape({-1, a_run.size(-1)});  // (M, K), a view: the input addmm saw
    variable_list result{at::Tensor(), at::Tensor()};           // the segment, then x
    std::vector<at::Tensor> grad_parts;                         // a's gradient from each linear
    size_t p = 1;
    for (size_t i = 0; i < s->has_bias.size(); ++i) {
      const at::Tensor& weight = saved[p++];
      const at::Tensor g2 = grads[i].reshape({-1, grads[i].size(-1)});  // (M, N)
      // at::linear's derivative: addmm(b, a2, W.t()) -> grad a2 = g W, grad W = g^T a2, grad b = g summed to b.
      grad_parts.push_back(g2.mm(as_run(weight)).to(a.scalar_type()).view(a.sizes()));
      result.push_back(g2.t().mm(a2).to(weight.scalar_type()));
      if (s->has_bias[i]) {
        const at::Tensor& bias = saved[p++];
        result.push_back(at::sum_to(g2, bias.sizes()).to(bias.scalar_type()));
      }
    }
    // Summed last layer first, the order in which autograd's engine reaches the plain model's linears (the one made
    // last has the highest sequence number), so with one consumer of x the sum is the plain model's to the last bit.
    at::Tensor grad_a = grad_parts.back();
    for (size_t i = grad_parts.size() - 1; i-- > 0;) grad_a = grad_a + grad_parts[i];
    torch::autograd::backward({a}, {grad_a});  // f's parameters accumulate; x's copy gets its gradient
    result[1] = input.grad();
    return result;
  }
};

}  // namespace

at::Tensor checkpointed(const TensorFn& fn, const at::Tensor& x, bool preserve_rng) {
  auto s = c10::make_intrusive<Segment>();
  s->fn = fn;
  // Before the forward runs: the states its dropouts start from.
  if (preserve_rng) s->generators = GeneratorStates::of(x.device());
  return Checkpointed::apply(std::move(s), x)[0];
}

std::vector<at::Tensor> linears_of_recomputed(const TensorFn& f, const at::Tensor& x,
                                              const std::vector<torch::nn::Linear>& layers) {
  auto s = c10::make_intrusive<Segment>();
  s->fn = f;
  std::vector<at::Tensor> params;
  for (const auto& layer : layers) {
    params.push_back(layer->weight);
    s->has_bias.push_back(layer->bias.defined());
    if (layer->bias.defined()) params.push_back(layer->bias);
  }
  return RecomputedLinears::apply(std::move(s), x, at::TensorList(params));
}

}  // namespace stepwise::model
