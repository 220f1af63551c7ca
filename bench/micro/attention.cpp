// attention: the reference's explicit masked softmax against scaled_dot_product_attention with each backend
// pinned, through the model's own attention module, forward and forward+backward, fp32 and bf16.
#include "bench/micro/micro.h"
#include "model/gpt.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

namespace stepwise::micro {

namespace {

struct Variant {
  const char* name;
  bool flash, dynamic_mask;
  model::SdpaBackend backend;
};

const Variant kVariants[] = {
    {"explicit", false, false, model::SdpaBackend::Auto},
    {"explicit_dynamic_mask", false, true, model::SdpaBackend::Auto},
    {"sdpa_auto", true, false, model::SdpaBackend::Auto},
    {"sdpa_flash", true, false, model::SdpaBackend::Flash},
    {"sdpa_efficient", true, false, model::SdpaBackend::Efficient},
    {"sdpa_cudnn", true, false, model::SdpaBackend::CuDnn},
    {"sdpa_math", true, false, model::SdpaBackend::Math},
};

void attention(benchmark::State& state, const MicroContext& ctx, const model::Preset& preset, Variant v, bool backward,
               at::ScalarType dtype) {
  const int64_t B = state.range(0), T = state.range(1), C = preset.config.n_embd();
  auto config = preset.config;
  config.dropout(0.0).flash(v.flash).dynamic_mask(v.dynamic_mask).sdpa_backend(v.backend);
  torch::manual_seed(0);
  model::CausalSelfAttention attn(config);
  attn->to(ctx.device, dtype);
  auto x = at::randn({B, T, C}, at::TensorOptions().device(ctx.device).dtype(dtype)).requires_grad_(backward);
  auto grad = at::randn_like(x);
  run_timed(state, ctx, [&] {
    auto y = attn->forward(x);  // (B, T, C)
    if (!backward) return;
    y.backward(grad);
    auto leaves = attn->parameters();
    leaves.push_back(x);
    set_grads_to_none(leaves);
  });
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_attention(const MicroContext& ctx) {
  for (const auto* preset : ctx.presets)
    for (const auto& v : kVariants)
      for (bool backward : {false, true})
        for (auto dtype : {at::kFloat, at::kBFloat16}) {
          const std::string details =
              std::string(backward ? "fwd+bwd" : "fwd") + (dtype == at::kFloat ? "/fp32" : "/bf16");
          register_benchmark(ctx, benchmark_name("attention", *preset, v.name, details),
                             [&ctx, preset, v, backward, dtype](benchmark::State& s) {
                               attention(s, ctx, *preset, v, backward, dtype);
                             })
              ->ArgNames({"B", "T"})
              ->ArgsProduct({{preset->default_batch_size}, sequence_lengths(*preset)});
        }
}

}  // namespace stepwise::micro
