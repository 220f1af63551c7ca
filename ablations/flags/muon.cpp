// muon (Keller Jordan's Muon, the speedrun's record #3 on): the blocks' 2-D weights step with Nesterov momentum
// orthogonalised by five Newton-Schulz iterations, the embeddings, head and 1-D parameters with the run's AdamW
// (bench/optim/muon.h). Under data parallel every rank computes the whole update from the all-reduced gradients (the
// speedrun splits the matrices across ranks instead; the same update). zero1 shards a flat view that cuts matrices
// apart, so muon with zero1 is a planned skip. Another optimizer on purpose, judged by time to target.
#include "ablations/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration muon({
    .name = "muon",
    .position = 210,
    .summary = "Muon (Nesterov momentum, Newton-Schulz orthogonalised) for the blocks' matrices, AdamW for the "
               "embeddings, head and 1-D parameters (--muon-lr, --muon-momentum, --muon-scale, --muon-ns-dtype)",
    .reference = "AdamW for every parameter",
    .stage = "optimizer",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/muon.cpp", "bench/optim/muon.cpp", "bench/step/train_state.cpp", "bench/python/muon.py"},
    .apply = [](bench::RunConfig& c) { c.muon = true; },
    .unmet = [](const bench::RunConfig& c) -> std::optional<std::string> {
      if (c.zero1)
        return "muon does not compose with zero1: ZeRO-1 shards a flat view of all parameters, cutting matrices "
               "apart, and Newton-Schulz needs each matrix whole";
      return std::nullopt;
    },
    .options = {positive_option(
                    "muon_lr", "learning rate", [](auto& c) -> auto& { return c.muon_options.lr(); },
                    "with muon: the Muon group's base rate (the AdamW group keeps --lr; one schedule scales both)",
                    "0.02, the speedrun's records #8-#10")
                    .in_suite_files(),
                fraction_option(
                    "muon_momentum", [](auto& c) -> auto& { return c.muon_options.momentum(); },
                    "with muon: the Nesterov momentum mu", "0.95, every record's")
                    .in_suite_files(),
                choice_option(
                    "muon_scale", bench::kMuonScaleNames, [](auto& c) -> auto& { return c.muon_options.scale(); },
                    "with muon: how the rate scales with a matrix's shape (out x in). none: record #3's; "
                    "sqrt_max_dim: records #4-#7's sqrt(max(out, in)); sqrt_out_over_in: record #8 on, "
                    "sqrt(max(1, out / in))")
                    .in_suite_files(),
                choice_option(
                    "muon_ns_dtype", bench::kMuonNsDtypeNames,
                    [](auto& c) -> auto& { return c.muon_options.ns_dtype(); },
                    "with muon: the dtype Newton-Schulz runs in. auto: bf16 where the device runs it natively (a GPU, "
                    "a CPU with avx512_bf16 or AMX), else fp32; bf16: the speedrun's; fp32")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
