// fused_adamw (Raschka's step 3, Karpathy's last): AdamW as at::_fused_adamw_, one kernel per dtype and device,
// instead of the baseline optimizer (--adamw-baseline). The same update, computed in a different order.
#include "ablations/flags.h"

namespace stepwise::ablations::flags {

const Flag fused_adamw{
    .name = "fused_adamw",
    .summary = "AdamW as one fused kernel (at::_fused_adamw_)",
    .reference = "torch.optim.AdamW()'s default: the single-tensor loop on a CPU, foreach on CUDA (--adamw-baseline)",
    .stage = "optimizer",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/fused_adamw.cpp", "bench/optim/adamw_fused.cpp", "bench/step/train_state.cpp"},
    .apply = [](bench::RunConfig& c) { c.fused_adamw = true; },
};

}  // namespace stepwise::ablations::flags
