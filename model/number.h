// number(v): a constant in an ATen call the way PyTorch Python passes one. Python's argument parser hands `x * 0.5`
// to ATen as x times a wrapped 0-dim tensor: one aten::mul. C++'s `x * 0.5` picks the Scalar overload, which wraps the
// number itself and dispatches aten::mul again (`mul_` dispatches aten::mul_ then aten::mul's out variant), and under
// autograd records a node of its own whose backward wraps the number once more: the same values, one op more each
// time (--count-ops shows them, docs/python-rows.md). A wrapped number, like a Scalar, never changes the other
// operand's dtype in type promotion, so the results are bit for bit the Scalar overload's.
#pragma once

#include <ATen/ScalarOps.h>

namespace stepwise::model {

// A 0-dim float64 CPU tensor marked as a wrapped number, as python_arg_parser makes of a Python float.
inline at::Tensor number(double v) { return at::native::wrapped_scalar_tensor(v); }

}  // namespace stepwise::model
