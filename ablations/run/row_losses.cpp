// judge_losses: which tolerance a row's losses are held to, from its flags, its implementation and its device.
#include "ablations/run/row_losses.h"

#include "ablations/flag_table/flags.h"

#include <cmath>
#include <span>

namespace stepwise::ablations {

std::vector<double> all_losses(const bench::RunResult& r) {
  std::vector<double> out;
  for (const auto* phase : {&r.warmup, &r.steps})
    for (const auto& s : *phase) out.push_back(s.loss);
  return out;
}

std::vector<double> all_losses(const nlohmann::json& doc) {
  std::vector<double> out;
  for (const char* phase : {"warmup", "steps"})
    for (const auto& s : doc[phase]) out.push_back(s["loss"].is_null() ? NAN : s["loss"].get<double>());
  return out;
}

Judgement judge_losses(const PlannedConfig& p, const std::string& implementation, const std::vector<double>& losses,
                       int64_t batch, bool is_baseline, const std::optional<Reference>& baseline,
                       const std::optional<Reference>& engine) {
  const auto rounding =
      p.run.bf16 && p.run.bf16_mode == bench::Bf16Mode::Pure ? LossRounding::Bf16 : LossRounding::Fp32;
  // torch.compile fuses kernels and draws its own dropout masks; eager rows on a CPU run deterministic kernels.
  const bool compiled = implementation != "libtorch" && implementation != "python-eager";
  const auto spread = p.run.device.is_cuda() || compiled ? Spread::Loose : Spread::Tight;
  Judgement j;
  j.check = is_baseline ? baseline_loss(losses)
            : !baseline ? check_loss(losses, std::nullopt, MathClass::Exact, false)
                        : check_loss(losses, std::span<const double>(baseline->losses), math_class(p.effective),
                                     baseline->batch == batch, rounding, spread);
  if (implementation != "libtorch" && engine) {
    // The same configuration, weights and batches: eager runs the same ATen ops in the same order (and draws the
    // same dropout masks).
    const auto math = !compiled ? MathClass::Exact : p.run.bf16 ? MathClass::Bf16 : MathClass::Fp32;
    j.vs_libtorch = check_loss(losses, std::span<const double>(engine->losses), math, engine->batch == batch, rounding);
  }
  return j;
}

}  // namespace stepwise::ablations
