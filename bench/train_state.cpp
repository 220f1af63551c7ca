// Building a configuration's model, optimizer and loader.
#include "bench/train_state.h"

#include "model/weights.h"

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>
#include <torch/utils.h>

namespace stepwise::bench {

model::GPT build_model(const RunConfig& config) {
  torch::manual_seed(config.seed);
  // Parameters depend only on the layout (fused QKV, padded vocabulary), not on the other switches.
  auto reference_config = config.model;
  reference_config.flash(false).vocab_padding(false);
  model::GPT reference(reference_config);
  model::GPT model = reference;
  if (config.model.flash() || config.model.vocab_padding()) {
    model = model::GPT(config.model);
    model::copy_weights(reference, model);
  }
  // Reseed so dropout draws the same stream whichever layouts were built above.
  torch::manual_seed(dropout_seed(config.seed));
  model->to(config.device);
  if (config.bf16 && config.bf16_mode == Bf16Mode::Pure) model->to(at::kBFloat16);
  model->train();
  return model;
}

uint64_t dropout_seed(uint64_t seed, int rank) { return seed + 1 + static_cast<uint64_t>(rank); }

TrainState make_train_state(const RunConfig& config, std::shared_ptr<const Tokens> tokens,
                            std::shared_ptr<Collectives> collectives) {
  TrainState state;
  state.device = config.device;
  state.model = build_model(config);
  if (collectives) {
    auto params = state.model->parameters();
    collectives->broadcast_from_rank0(params);  // identical weights everywhere, whatever each rank's RNG did
    torch::manual_seed(dropout_seed(config.seed, collectives->rank()));
    state.grad_sync = std::make_unique<GradientSync>(state.model->parameters(), collectives);
  }
  state.autocast = config.bf16 && config.bf16_mode == Bf16Mode::Autocast;
  state.optimizer = make_adamw(config.adamw_kind, state.model->parameters(), config.adamw);
  if (tokens) {
    LoaderOptions lo;
    lo.batch_size = config.batch_size;
    lo.seq_len = config.seq_len;
    lo.seed = config.seed;
    lo.copy_mode = config.copy_mode;
    lo.device = config.device;
    if (collectives) {
      lo.rank = collectives->rank();
      lo.world = collectives->world_size();
    }
    state.loader = std::make_unique<Loader>(std::move(tokens), lo);
  }
  return state;
}

}  // namespace stepwise::bench
