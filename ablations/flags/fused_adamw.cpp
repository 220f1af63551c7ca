// fused_adamw (Raschka's step 3, Karpathy's last): the same update, computed in a different order. The baseline it is
// held against is what torch.optim.AdamW() picks on the device, as Raschka's and Karpathy's baselines ran, unless
// --adamw-baseline names another: on a GPU Raschka's published 1.03x was fused over foreach, not over a loop.
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

// auto: torch.optim.AdamW()'s own choice on the device, so the baseline is the reference scripts' own.
FlagOption adamw_baseline() {
  return {
      .name = "adamw_baseline",
      .help =
          "the AdamW that runs while fused_adamw is off: auto is what torch.optim.AdamW() picks on the device "
          "(forloop on a CPU, foreach on CUDA); forloop is its single-tensor loop, foreach the multi-tensor form, "
          "reference the C++ frontend's torch::optim::AdamW",
      .choices = {"auto", "forloop", "foreach", "reference"},
      .type_name = "{auto,forloop,foreach,reference}",
      .acts_while_off = true,
      .default_value = "auto",
      .default_help = "auto",
      .set = [](bench::RunConfig& c, const std::string& v) {
        if (v == "auto")
          c.adamw_baseline = c.device.is_cuda() ? bench::AdamWKind::Foreach : bench::AdamWKind::Forloop;
        else if (v == "forloop" || v == "foreach" || v == "reference")
          c.adamw_baseline = bench::adamw_kind_from_string(v);
        else
          throw std::invalid_argument("unknown AdamW baseline '" + v + "' (valid: auto, forloop, foreach, reference)");
      }};
}

const FlagRegistration fused_adamw({
    .name = "fused_adamw",
    .position = 30,
    .summary = "AdamW as one fused kernel (at::_fused_adamw_)",
    .reference = "torch.optim.AdamW()'s default: the single-tensor loop on a CPU, foreach on CUDA (--adamw-baseline)",
    .stage = "optimizer",
    .math = MathClass::Exact,
    .applies = Applies::Both,
    .code = {"ablations/flags/fused_adamw.cpp", "bench/optim/adamw_fused.cpp", "bench/step/train_state.cpp"},
    .apply = [](bench::RunConfig& c) { c.fused_adamw = true; },
    .options = {adamw_baseline()},
});

}  // namespace
}  // namespace stepwise::ablations
