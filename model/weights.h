// Carries weights between GPT variants so that every flag starts from the same function.
#pragma once

#include "model/gpt.h"

namespace stepwise::model {

// Copies every parameter of `from` into `to`, converting layouts: separate query/key/value <-> fused c_attn
// (rows q | k | v), and vocabularies of different padding (the shared rows are copied; padded rows keep
// their own values). A parameter of `from` that `to` lacks is left out: the position table wpe, when `to` is rotary.
// Throws std::invalid_argument if a parameter of `to` has no counterpart (wpe, when only `from` is rotary).
void copy_weights(const GPT& from, GPT& to);

}  // namespace stepwise::model
