// Building a configuration's state so that every configuration starts from the same function: the reference layout
// is initialised from the seed and its weights are carried into the variant's layout (flash, vocab_padding, rotary).
#include "bench/step/train_state.h"

#include "bench/optim/muon.h"
#include "bench/step/bf16.h"
#include "model/weights.h"

#include <ATen/ATen.h>
#include <ATen/core/Generator.h>
#include <torch/utils.h>

#include <stdexcept>

namespace stepwise::bench {

model::GPT initial_model(const RunConfig& config) {
  torch::manual_seed(config.seed);
  // Parameters depend only on the layout (fused QKV, padded vocabulary, rotary's missing position table), not on the
  // other flags. The reference keeps wpe, so its draw from the generator, and every weight after it, is the same with
  // rotary as without; rotary's model simply has no wpe to copy it into.
  auto reference_config = config.model;
  reference_config.flash(false).vocab_padding(false).rotary(false);
  model::GPT reference(reference_config);
  if (!config.model.flash() && !config.model.vocab_padding() && !config.model.rotary()) return reference;
  model::GPT model(config.model);
  model::copy_weights(reference, model);
  return model;
}

model::GPT build_model(const RunConfig& config) {
  model::GPT model = initial_model(config);
  // Reseed so dropout draws the same stream whichever layouts were built above.
  torch::manual_seed(dropout_seed(config.seed));
  model->to(config.device);
  cast_model_for_bf16(model, config);
  model->train();
  return model;
}

void time_phases(TrainState& state, PhaseMarks* marks) {
  state.phases = marks;
  if (auto* zero1 = dynamic_cast<Zero1AdamW*>(state.optimizer.get())) zero1->time_phases(marks);
}

void optimizer_step(TrainState& state) {
  if (!state.lr_schedule.constant())
    state.optimizer->set_lr(state.lr_schedule.lr_at(state.base_lr, state.optimizer_steps));
  state.optimizer->step();
  ++state.optimizer_steps;
}

std::unique_ptr<Optimizer> make_optimizer(const RunConfig& config, const model::GPT& model) {
  if (config.muon) {
    const auto muon =
        MuonOptions(config.muon_options).ns_dtype(resolved_ns_dtype(config.muon_options.ns_dtype(), config.device));
    return make_muon(config.optimizer(), model->named_parameters(), muon, config.adamw);
  }
  return make_adamw(config.optimizer(), model->parameters(), config.adamw);  // fused_adamw or not
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
    // zero1 reduce-scatters the gradients in its step instead: no all-reduce during backward.
    if (!config.zero1) state.grad_sync = std::make_unique<GradientSync>(state.model->parameters(), collectives);
  }
  state.bf16_autocast = bf16_autocast(config);
  // muon with zero1 never reaches here: the muon flag's declaration skips that configuration (ablations/flags).
  if (config.zero1 && collectives) {
    // After the broadcast, so every rank's shard starts from rank 0's weights; fused_adamw steps each shard fused.
    // Without collectives the whole AdamW: the max_batch probe steps each rank alone, with neither GradientSync's
    // buckets nor zero1's buffers, and a single process never runs zero1 itself (the plan skips it).
    state.optimizer =
        std::make_unique<Zero1AdamW>(config.optimizer(), state.model->parameters(), config.adamw, collectives);
  } else {
    state.optimizer = make_optimizer(config, state.model);
  }
  state.lr_schedule = config.lr_schedule;
  state.base_lr = config.adamw.lr();
  if (tokens)
    state.loader = std::make_unique<Loader>(std::move(tokens), config, collectives ? collectives->rank() : 0,
                                            collectives ? collectives->world_size() : 1);
  return state;
}

}  // namespace stepwise::bench
