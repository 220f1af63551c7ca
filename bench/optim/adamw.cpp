// The factory and the reference AdamW (torch::optim::AdamW).
#include "bench/optim/adamw.h"

#include "bench/optim/adamw_foreach.h"
#include "bench/optim/adamw_fused.h"

#include <torch/optim/adamw.h>

#include <stdexcept>

namespace stepwise::bench {

namespace {

class ReferenceAdamW final : public AdamW {
 public:
  ReferenceAdamW(std::vector<at::Tensor> params, const AdamWOptions& o)
      : optimizer_(std::move(params), torch::optim::AdamWOptions(o.lr())
                                          .betas({o.beta1(), o.beta2()})
                                          .eps(o.eps())
                                          .weight_decay(o.weight_decay())) {}
  void step() override { optimizer_.step(); }
  void zero_grad() override { optimizer_.zero_grad(/*set_to_none=*/true); }
  std::string name() const override { return "reference"; }

 private:
  torch::optim::AdamW optimizer_;
};

}  // namespace

std::string to_string(AdamWKind k) {
  switch (k) {
    case AdamWKind::Reference: return "reference";
    case AdamWKind::Foreach: return "foreach";
    case AdamWKind::Fused: return "fused";
  }
  return "?";
}

AdamWKind adamw_kind_from_string(const std::string& s) {
  if (s == "reference") return AdamWKind::Reference;
  if (s == "foreach") return AdamWKind::Foreach;
  if (s == "fused") return AdamWKind::Fused;
  throw std::invalid_argument("unknown AdamW implementation '" + s + "' (valid: reference, foreach, fused)");
}

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& params, const char* who) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) {
    if (!p.grad().defined()) throw std::runtime_error(std::string(who) + ": a parameter has no gradient");
    grads.push_back(p.grad());
  }
  return grads;
}

std::unique_ptr<AdamW> make_adamw(AdamWKind kind, std::vector<at::Tensor> params, const AdamWOptions& options) {
  switch (kind) {
    case AdamWKind::Reference: return std::make_unique<ReferenceAdamW>(std::move(params), options);
    case AdamWKind::Foreach: return std::make_unique<ForeachAdamW>(std::move(params), options);
    case AdamWKind::Fused: return std::make_unique<FusedAdamW>(std::move(params), options);
  }
  throw std::invalid_argument("unknown AdamW kind");
}

}  // namespace stepwise::bench
