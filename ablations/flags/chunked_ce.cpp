// chunked_ce (Liger-Kernel's fused linear cross-entropy, llm.c's fused classifier): each chunk's logit gradient is
// formed and consumed before the next, so the largest buffers of a GPT-2 step never exist. Plain ATen ops on every
// device (model/chunked_ce.cpp); the loss is summed in another order: the fp32 class.
#include "ablations/flag_table/flags.h"

#include "model/chunked_ce.h"

namespace stepwise::ablations {
namespace {

FlagOption chunk_rows() {
  auto rows = positive_option(
      "ce_chunk_rows", "rows", [](auto& c) -> auto& { return c.model.ce_chunk_rows(); },
      "with chunked_ce: rows of the (B*T, V) logits per chunk",
      "Liger's rule, B*T / ceil(V / C) rounded up to a power of two, which keeps a chunk's "
      "logits near the hidden states' size");
  // The rows per chunk that ran: the option's, else Liger's rule at the batch measured (max_batch may raise it).
  rows.result_value = [](const bench::RunConfig& c, int64_t measured_batch) {
    const auto& m = c.model;
    return nlohmann::json(m.ce_chunk_rows() > 0
                              ? m.ce_chunk_rows()
                              : model::chunked_ce_rows(measured_batch * c.seq_len, m.padded_vocab_size(), m.n_embd()));
  };
  return rows;
}

const FlagRegistration chunked_ce({
    .name = "chunked_ce",
    .position = 120,
    .summary =
        "output head and cross-entropy in chunks of rows (--ce-chunk-rows, default Liger's rule), never the whole "
        "(B*T, V) logits or their gradient",
    .reference = "the full (B*T, V) logits, then cross_entropy",
    .stage = "model",
    .math = MathClass::Fp32,
    .applies = Applies::Both,
    .code = {"ablations/flags/chunked_ce.cpp", "model/chunked_ce.cpp", "model/gpt.cpp", "model/config.cpp"},
    .apply = [](bench::RunConfig& c) { c.model.chunked_ce(true); },
    .options = {chunk_rows()},
});

}  // namespace
}  // namespace stepwise::ablations
