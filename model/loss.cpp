// Cross-entropy over all (padded) logits.
#include "model/loss.h"

#include <ATen/ATen.h>

namespace stepwise::model {

at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets) {
  return at::cross_entropy_loss(logits.flatten(0, 1), targets.flatten());
}

}  // namespace stepwise::model
