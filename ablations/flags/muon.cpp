// muon (Keller Jordan's Muon, the speedrun's record #3 on): the blocks' 2-D weights step with Nesterov momentum
// orthogonalised by five Newton-Schulz iterations, the embeddings, head and 1-D parameters with the Adam the records
// paired it with (β 0.9/0.95, no weight decay, the embeddings and the head at their own rates: record #8's by default,
// bench/optim/muon.h), not the baseline's AdamW, so the row measures what the records measured. Under data parallel
// every rank computes the whole update from the all-reduced gradients (the speedrun splits the matrices across ranks
// instead; the same update). zero1 shards a flat view that cuts matrices apart, so muon with zero1 is a planned skip.
// Another optimizer on purpose, judged by time to target.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration muon({
    .name = "muon",
    .position = 210,
    .summary = "Muon (Nesterov momentum, Newton-Schulz orthogonalised) for the blocks' matrices, with the Adam the "
               "records paired it with for the embeddings, head and 1-D parameters (record #8's: beta 0.9/0.95, no "
               "weight decay, embeddings 0.3, head 0.002) (--muon-lr, --muon-momentum, --muon-scale, "
               "--muon-ns-dtype, --muon-adam-beta1, --muon-adam-beta2, --muon-adam-wd, --muon-embed-lr, "
               "--muon-head-lr)",
    .reference = "AdamW for every parameter",
    .stage = "optimizer",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/muon.cpp", "bench/optim/muon.cpp", "bench/step/train_state.cpp", "bench/python/muon.py",
             "bench/python/request.py"},
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
                    .in_suite_files(),
                // The Adam group Muon pairs with, record #8's (bench::kMuonAdamRecord), in place of the run's AdamW.
                fraction_option(
                    "muon_adam_beta1", [](auto& c) -> auto& { return c.muon_options.adam_beta1(); },
                    "with muon: beta1 of the Adam that steps the embeddings, head and 1-D parameters",
                    "0.9, record #8's")
                    .in_suite_files(),
                fraction_option(
                    "muon_adam_beta2", [](auto& c) -> auto& { return c.muon_options.adam_beta2(); },
                    "with muon: beta2 of that Adam (the baseline's AdamW has 0.999)", "0.95, record #8's")
                    .in_suite_files(),
                fraction_option(
                    "muon_adam_wd", [](auto& c) -> auto& { return c.muon_options.adam_weight_decay(); },
                    "with muon: that Adam's decoupled weight decay (the baseline's AdamW has 0.1)", "0, record #8's")
                    .in_suite_files(),
                positive_option(
                    "muon_embed_lr", "learning rate", [](auto& c) -> auto& { return c.muon_options.embed_lr(); },
                    "with muon: the base rate of the token (and position) embeddings in that Adam; the schedule "
                    "scales it as the others",
                    "0.3, record #8's")
                    .in_suite_files(),
                positive_option(
                    "muon_head_lr", "learning rate", [](auto& c) -> auto& { return c.muon_options.head_lr(); },
                    "with muon: the base rate of the untied head (lm_head) in that Adam; the 1-D parameters keep "
                    "--lr",
                    "0.002, record #8's")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
