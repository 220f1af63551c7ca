// relu2's activation, relu(x)^2 (So et al., Primer, arXiv 2109.08668), as one autograd function.
#pragma once

#include <ATen/ATen.h>

namespace stepwise::model {

// relu(x)^2, x (B, T, 4C) the MLP's hidden layer. Two ops forward (relu, the product) and two backward (g r, then
// times 2 in place), where autograd's graph of square(relu(x)) takes five backward, each a fresh tensor of the hidden
// layer's size: pow(r, 1)'s copy, the 2, the product, relu's threshold. The same numbers: 2 (g r) = g (2 r) exactly,
// and where x <= 0 the product is a zero as relu's threshold gives one (its sign the gradient's; no sum sees it).
at::Tensor relu_squared(const at::Tensor& x);

}  // namespace stepwise::model
