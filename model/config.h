// GPTConfig: the model's shape and its model flags, builder-style, and the named presets. It is all model/ is
// configured by: model/ never sees the flag table, only these fields, which carry the flags' own names.
#pragma once

#include "model/enum_names.h"

#include <torch/arg.h>

#include <cstdint>
#include <string>
#include <vector>

namespace stepwise::model {

// Which SDPA kernel family the flash layout pins (auto = PyTorch's own choice). model/sdpa.h pins it.
enum class SdpaBackend { Auto, Flash, Efficient, CuDnn, Math };
inline constexpr auto kSdpaBackendNames =
    enum_names<SdpaBackend>("SDPA backend", {{SdpaBackend::Auto, "auto"},
                                             {SdpaBackend::Flash, "flash"},
                                             {SdpaBackend::Efficient, "efficient"},
                                             {SdpaBackend::CuDnn, "cudnn"},
                                             {SdpaBackend::Math, "math"}});

std::string to_string(SdpaBackend b);
// Throws std::invalid_argument naming the valid choices.
SdpaBackend sdpa_backend_from_string(const std::string& s);
std::vector<std::string> sdpa_backend_names();

// What the checkpoint flag recomputes in the backward (--checkpoint-mode); model/recompute.h does it.
enum class CheckpointMode {
  Full,       // each block keeps only its input; its forward runs again in the backward (torchtitan's full AC)
  Selective,  // llm.c's -r 2: the LayerNorms' and the GELU's outputs are recomputed, the matmul outputs kept
};
inline constexpr auto kCheckpointModeNames = enum_names<CheckpointMode>(
    "checkpoint mode", {{CheckpointMode::Full, "full"}, {CheckpointMode::Selective, "selective"}});

std::string to_string(CheckpointMode m);
// Throws std::invalid_argument naming the valid choices.
CheckpointMode checkpoint_mode_from_string(const std::string& s);
std::vector<std::string> checkpoint_mode_names();

// How the fp8 flag scales a tensor into FP8 (--fp8-scaling): torchao's Float8Linear recipes, model/fp8_linear.h.
enum class Fp8Scaling {
  Tensorwise,  // one scale per tensor, e4m3 forward operands, e5m2 gradients (torchao's default recipe)
  Rowwise,     // one scale per row along the contraction, rounded down to a power of two, e4m3 throughout
};
inline constexpr auto kFp8ScalingNames =
    enum_names<Fp8Scaling>("fp8 scaling", {{Fp8Scaling::Tensorwise, "tensorwise"}, {Fp8Scaling::Rowwise, "rowwise"}});

std::string to_string(Fp8Scaling s);
// Throws std::invalid_argument naming the valid choices.
Fp8Scaling fp8_scaling_from_string(const std::string& s);
std::vector<std::string> fp8_scaling_names();

// GPT-2's vocabulary (50,257 BPE tokens).
constexpr int64_t kGpt2VocabSize = 50257;
// vocab_padding rounds the vocabulary up to a multiple of this (50257 -> 50304).
constexpr int64_t kVocabPadMultiple = 64;
// logit_softcap's cap: record #9's 30 (record #18 lowered it to 15).
constexpr double kDefaultSoftcap = 30.0;

struct GPTConfig {
  TORCH_ARG(int64_t, vocab_size) = kGpt2VocabSize;
  TORCH_ARG(int64_t, context_length) = 1024;
  TORCH_ARG(int64_t, n_embd) = 768;
  TORCH_ARG(int64_t, n_head) = 12;
  TORCH_ARG(int64_t, n_layer) = 12;
  TORCH_ARG(double, dropout) = 0.1;
  TORCH_ARG(bool, qkv_bias) = false;

  // The model flags, named as on the command line; false is the reference implementation (Raschka's 00_orig.py).
  // Causal mask built per forward for the current length instead of a stored context x context buffer.
  TORCH_ARG(bool, dynamic_mask) = false;
  // at::layer_norm and gelu(approximate="tanh") instead of the hand-written formulas.
  TORCH_ARG(bool, native_layers) = false;
  // One fused QKV projection and scaled_dot_product_attention(is_causal) instead of an explicit masked softmax.
  TORCH_ARG(bool, flash) = false;
  // Pins the SDPA backend while attention runs (flash layout only); the global setting is restored after.
  TORCH_ARG(SdpaBackend, sdpa_backend) = SdpaBackend::Auto;
  // Vocabulary rounded up to a multiple of kVocabPadMultiple; padded ids never occur in data.
  TORCH_ARG(bool, vocab_padding) = false;
  // Activations recomputed in the backward instead of kept (model/recompute.h), as checkpoint_mode says.
  TORCH_ARG(bool, checkpoint) = false;
  TORCH_ARG(CheckpointMode, checkpoint_mode) = CheckpointMode::Full;
  // The output head and the cross-entropy in chunks of rows, never the whole (B*T, V) logits (model/chunked_ce.h).
  TORCH_ARG(bool, chunked_ce) = false;
  // Rows per chunk with chunked_ce; 0 = Liger's rule from B*T, V and the width (chunked_ce_rows()).
  TORCH_ARG(int64_t, ce_chunk_rows) = 0;
  // The transformer's linear layers through FP8 scaled matmuls with dynamic scaling (model/fp8_linear.h), as
  // fp8_scaling says; a layer whose GEMMs would be slower in FP8 stays in the input's precision (fp8_gemm_pays()).
  TORCH_ARG(bool, fp8) = false;
  TORCH_ARG(Fp8Scaling, fp8_scaling) = Fp8Scaling::Tensorwise;
  // With fp8, the output head too (the speedrun's FP8 head); the same small-GEMM filter applies to it.
  TORCH_ARG(bool, fp8_head) = false;
  // With fp8, every linear whose dimensions _scaled_mm accepts (multiples of 16) runs in FP8, the small-GEMM filter
  // off: for tests on CPU-sized models, and to measure what the filter saves.
  TORCH_ARG(bool, fp8_every_layer) = false;

  // The speedrun's model changes (modded-nanogpt's records; ../shared/spec/speedrun-anchors.md): each changes the
  // function trained, so each is judged by time to a target loss, not by the loss check.
  // Rotary position embeddings on q and k (model/rotary.h) instead of the learned position table, which is not built.
  TORCH_ARG(bool, rotary) = false;
  // q and k RMS-normalised over each head's dimensions (no weight, PyTorch's default eps); the scale stays 1/sqrt(D).
  TORCH_ARG(bool, qk_norm) = false;
  // relu(x)^2 in the MLP instead of GELU.
  TORCH_ARG(bool, relu2) = false;
  // The attention's and the MLP's output projections (c_proj: weight and bias) start at zero, so every block starts as
  // the identity.
  TORCH_ARG(bool, zero_init_proj) = false;
  // With zero_init_proj: the untied head (lm_head) starts at zero too, as record #8's does, so the first logits are 0
  // and the first loss ln(padded vocabulary).
  TORCH_ARG(bool, zero_init_head) = false;
  // softcap * tanh(logits / softcap) before the loss, in training and evaluation (model/softcap.h).
  TORCH_ARG(bool, logit_softcap) = false;
  TORCH_ARG(double, softcap) = kDefaultSoftcap;

  // Tests only (STEPWISE_TEST_BREAK=future_token, ablations/run/test_hooks.h): each position also attends to the next
  // token, a broken attention that learns faster and that the loss check and the convergence guard must catch.
  TORCH_ARG(bool, test_sees_next_token) = false;

 public:
  // The vocabulary the embedding and the output head are built with.
  int64_t padded_vocab_size() const;
  int64_t head_dim() const { return n_embd() / n_head(); }

  // Throws std::invalid_argument with a message naming the problem.
  void validate() const;

  // Closed-form counts, checked against the built module by the tests.
  int64_t parameter_count() const;
  // The learned position table's: none with rotary, whose rotations have no parameters.
  int64_t position_embedding_parameters() const { return rotary() ? 0 : context_length() * n_embd(); }
  // The parameters a token passes through as matmul weights: everything but the two embedding tables.
  int64_t matmul_parameter_count() const;
  // nanoGPT's estimate 6N + 12*L*H*Q*T (T = sequence length), N = matmul_parameter_count(): the one FLOP count
  // behind every MFU figure. 855,000,576 at gpt2-124m, T=1024 (no qkv bias, untied head). Matmuls only: rotary's
  // rotations, qk_norm, relu2 and the softcap are elementwise (a few FLOPs per element, under 0.5% of a block's at
  // gpt2-124m) and are not counted, as nanoGPT counts no LayerNorm or GELU; rotary removes no matmul (wpe is a lookup).
  double flops_per_token(int64_t seq_len) const;
  // The FLOPs the hardware runs per token, recompute included (HFU): flops_per_token plus, with full checkpointing,
  // every block's forward again (2 * its matmul weights + 4*L*H*Q*T). Selective recomputes no matmul, so it adds
  // none: like nanoGPT's count, this counts matmuls only (a GELU or LayerNorm is under 0.1% of a block's FLOPs).
  double hardware_flops_per_token(int64_t seq_len) const;

  // Bytes the training step keeps for the backward, per sequence of `seq_len` tokens, with elements of
  // `element_bytes` (4 fp32, 2 pure bf16; autocast counted as fp32, an upper bound): the tensors autograd saves in
  // this configuration (the layout, the hand-written or native layers, dropout, checkpoint and chunked_ce), counted op
  // by op in model/config.cpp, plus the logits and their gradients at the loss. An estimate, which results put
  // beside the measured figure; `cuda` because a CPU keeps dropout noise in floats and runs SDPA's math form.
  double activation_bytes_per_sequence(int64_t seq_len, double element_bytes, bool cuda) const;
  // With chunked_ce, what its head holds once per step whatever the batch, beside the per-sequence figure: one chunk's
  // logits with their float32 log-softmax (which becomes their gradient in place) for `rows` = B*T rows, and the head
  // weight's gradient summed in float32. 0 without chunked_ce.
  double chunked_ce_step_bytes(int64_t rows, double element_bytes) const;
};

// A named model with the batch and sequence it is measured at by default.
struct Preset {
  std::string name;
  std::string description;
  GPTConfig config;
  int64_t default_batch_size;
  int64_t default_seq_len;
};

// GPT-2 124M (the reference), its larger siblings, and CPU-sized models that keep GPT-2's full vocabulary.
const std::vector<Preset>& presets();
// Throws std::invalid_argument naming the valid presets.
const Preset& preset(const std::string& name);
std::vector<std::string> preset_names();

}  // namespace stepwise::model
