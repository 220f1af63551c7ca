// flash (Raschka's step 7, Karpathy's fourth). A pinned SDPA kernel that has no implementation for the configuration
// (flash in fp32 on CUDA, anything but math or flash on a CPU) is a planned skip with the reason, never SDPA's bare "No
// available kernel"; every result records which kernel SDPA really ran (config.sdpa_backend_used, from
// bench/measure/runner.cpp), since auto may well pick another than its name suggests.
#include "ablations/flag_table/flags.h"

#include "model/sdpa.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration flash({
    .name = "flash",
    .position = 70,
    .summary = "one fused QKV projection and scaled_dot_product_attention(is_causal)",
    .reference = "separate Q/K/V projections and an explicit masked softmax (--sdpa-backend pins a kernel)",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/flash.cpp", "model/gpt.cpp", "model/sdpa.cpp", "model/weights.cpp",
             "bench/measure/runner.cpp", "bench/python/request.py"},
    .apply = [](bench::RunConfig& c) { c.model.flash(true); },
    .unmet = [](const bench::RunConfig& c) -> std::optional<std::string> {
      const auto pin = c.model.sdpa_backend();
      if (auto why = model::sdpa_backend_unavailable(pin, c.device.is_cuda(), c.bf16, c.model.dropout()))
        return "--sdpa-backend=" + model::to_string(pin) + " " + *why;
      return std::nullopt;
    },
    .options = {choice_option(
                    "sdpa_backend", model::kSdpaBackendNames, [](auto& c) -> auto& { return c.model.sdpa_backend(); },
                    "with flash: pins SDPA's kernel (auto: PyTorch's own choice) and restores the global "
                    "setting afterwards (model/sdpa.h)")
                    .in_suite_files()},
});

}  // namespace
}  // namespace stepwise::ablations
