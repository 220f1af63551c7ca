// The muon flag's optimizer: Muon (Keller Jordan, 2024; the speedrun's records #3 on) for the 2-D weights inside the
// blocks, and the Adam the records paired it with for everything else: β (0.9, 0.95), no weight decay, the embeddings
// and the head at their own rates (record #8's: 0.3 and 0.002), every 0-D/1-D parameter (biases, LayerNorm gains) at
// the run's --lr (MuonOptions; speedrun-anchors T3 (c), T8 (c)). For each Muon matrix W (out x in) with gradient g,
// one step is
//
//   buf <- mu buf + g,   u = g + mu buf                       (Nesterov momentum, mu = 0.95)
//   O = NS5(u)                                                 (newton_schulz5: an approximate U V^T of u = U S V^T)
//   W <- W - lr_eff O,   lr_eff = lr * scale(out, in) * the schedule's factor
//
// with no weight decay. The fused QKV projection (flash's c_attn, 3C x C) is orthogonalised as its three C x C blocks,
// as the speedrun does from record #4 and as the reference layout's separate query, key and value are, so both
// attention layouts train the same function.
//
// Batched by shape (issue 57): the matrices (and row blocks) of one shape once the tall ones are transposed (c_fc's
// 4C x C with the MLP's C x 4C) are stacked and orthogonalised together, one bmm/baddbmm chain per shape group and
// iteration, as the speedrun's later Muon does: a few dispatches (on a GPU, kernel launches) per group instead of
// fifteen GEMMs per matrix, each into a buffer the group keeps from step to step (NsBuffers). The momentum is one pass
// over each matrix, u is written block by block straight into its group's stack in the Newton-Schulz dtype (no float
// copy of u, no stacking pass: on a CPU these passes are memory traffic; on a CPU in bf16, into a float stack kept per
// group and cast once, since ATen's CPU kernels cast through a fresh tensor per call), and the update is a foreach op
// per group and scale. Each matrix is still normalised by its own norm and iterated on its own
// numbers, so it is the same function as one matrix at a time (newton_schulz5, kept as the reference:
// tests/bench/optim/muon_test.cpp holds the two together).
//
// Data parallel: the step runs on every rank after GradientSync's all-reduce has averaged the gradients, so every rank
// computes the whole update from the same gradients and the weights stay identical. The speedrun's distributed Muon
// instead gives each rank a share of the matrices to orthogonalise and all-gathers the updates, which spreads the
// Newton-Schulz work; the result is the same, here at world_size times the optimizer's work per rank.
//
// zero1 with muon: a planned skip for now (make_train_state refuses it). ZeRO-1 shards a flat view of all parameters,
// which cuts matrices apart, while Newton-Schulz needs each matrix whole on the rank that orthogonalises it.
#pragma once

#include "bench/optim/adamw.h"
#include "bench/optim/optimizer.h"
#include "model/enum_names.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/arg.h>
#include <torch/ordered_dict.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stepwise::bench {

// The Newton-Schulz quintic X <- a X + (b A + c A^2) X, A = X X^T (the speedrun's coefficients, tuned so that five
// iterations push every singular value of a normalised matrix from as low as 0.01 into [0.68, 1.13], not to exactly 1).
constexpr double kNsA = 3.4445, kNsB = -4.7750, kNsC = 2.0315;
constexpr int64_t kNsSteps = 5;
// Added to ||u||_F before normalising, so a zero gradient gives a zero update.
constexpr double kNsEps = 1e-7;

// How lr_eff scales with the matrix's shape (out x in, as torch's Linear stores it): one record's rule each.
enum class MuonScale {
  None,           // record #3: lr_eff = lr (its lr: 0.018)
  SqrtMaxDim,     // records #4-#7: lr_eff = lr sqrt(max(out, in)) (their lr: 0.00036), an update of RMS ~ lr
  SqrtOutOverIn,  // records #8 on: lr_eff = lr sqrt(max(1, out / in)) (lr 0.02 at #8-#10): x2 for c_fc at 768
};
inline constexpr auto kMuonScaleNames =
    model::enum_names<MuonScale>("Muon scale rule", {{MuonScale::None, "none"},
                                                     {MuonScale::SqrtMaxDim, "sqrt_max_dim"},
                                                     {MuonScale::SqrtOutOverIn, "sqrt_out_over_in"}});
std::string to_string(MuonScale s);
// scale(out, in) of the rule.
double muon_scale(MuonScale rule, int64_t out, int64_t in);

// The dtype Newton-Schulz runs in.
enum class MuonNsDtype {
  Auto,     // bf16 where the device runs it natively, else fp32 (bench/run_config.h: resolved_ns_dtype)
  Bf16,     // the speedrun's: X cast to bf16 before normalising, and every product in bf16
  Float32,  // float32 throughout (a bf16 parameter's gradient is cast up first)
};
inline constexpr auto kMuonNsDtypeNames = model::enum_names<MuonNsDtype>(
    "Newton-Schulz dtype", {{MuonNsDtype::Auto, "auto"}, {MuonNsDtype::Bf16, "bf16"}, {MuonNsDtype::Float32, "fp32"}});
std::string to_string(MuonNsDtype d);

// The record the Adam group's defaults below are read from (speedrun-anchors T8 (c)): its embedding and head are
// untied, the embedding N(0, 1) as torch's default, as this model's are; its Muon rate and shape rule are the
// defaults above them.
inline constexpr const char* kMuonAdamRecord = "#8 (2024-11-03, untied embedding and head)";

struct MuonOptions {
  // The Muon group's base rate; the schedule scales it and every Adam group's by one factor.
  TORCH_ARG(double, lr) = 0.02;
  TORCH_ARG(double, momentum) = 0.95;
  TORCH_ARG(MuonScale, scale) = MuonScale::SqrtOutOverIn;
  TORCH_ARG(MuonNsDtype, ns_dtype) = MuonNsDtype::Auto;
  // Newton-Schulz batched by shape (newton_schulz5_batched); off, one matrix at a time as before issue 57: the
  // reference the micro-benchmark (bench/micro/muon.cpp) and the tests set the batched step beside. Not a flag: the
  // same function either way.
  TORCH_ARG(bool, batched) = true;
  // The Adam group Muon pairs with (record #8's, kMuonAdamRecord): its betas and weight decay for every non-Muon
  // parameter; the token (and position) embeddings at embed_lr, the head at head_lr, the rest at the run's --lr. The
  // run's AdamW eps and implementation (fused_adamw, --adamw-baseline) stay.
  TORCH_ARG(double, adam_beta1) = 0.9;
  TORCH_ARG(double, adam_beta2) = 0.95;
  TORCH_ARG(double, adam_weight_decay) = 0.0;
  TORCH_ARG(double, embed_lr) = 0.3;
  TORCH_ARG(double, head_lr) = 0.002;
};

// NS5(G): G (rows x cols) cast to `dtype`, divided by its Frobenius norm + kNsEps, transposed when rows > cols (so A is
// the smaller Gram matrix), kNsSteps quintic iterations, transposed back. Returned in `dtype`, G's shape. One matrix at
// a time: the reference newton_schulz5_batched is held to, and Muon's step with MuonOptions::batched off.
at::Tensor newton_schulz5(const at::Tensor& G, at::ScalarType dtype);

// The buffers Newton-Schulz iterates a stack of k (r x n) matrices in, r <= n: Muon keeps one per shape group from
// step to step. A fresh (k, r, n) tensor per GEMM is, on a CPU, one the C library's malloc maps and the kernel faults
// in afresh once it is past malloc's mmap threshold (each of gpt2-124m's groups is: 15 such tensors a group a step,
// which cost more than batching saved); on a GPU the caching allocator would have reused them anyway.
struct NsBuffers {
  at::Tensor X, next;  // (k, r, n): the iterate, then the next one (ping-pong: the GEMMs' out= cannot be an input)
  at::Tensor A, B;     // (k, r, r): X X^T, and b A + c A^2
  // (k, r, n) float32 where fit was asked for a float stage, else undefined: Muon's step on a CPU in bf16 writes u
  // here, casts it into X once and gets the result back in float once (Muon::step says why).
  at::Tensor staged;
  // Allocates them for k (r x n) matrices with `options`, and `staged` if float_stage, unless they already are so.
  void fit(int64_t k, int64_t r, int64_t n, const at::TensorOptions& options, bool float_stage = false);
};

// NS5 of each matrix of the stack in `buffers.X` (k, r, n), r <= n, in place, each divided by its own norm: the same
// ops as newton_schulz5 with bmm and baddbmm (into the buffers) for mm and addmm, so each iteration is three batched
// GEMMs for all k. The result is left in `buffers.X` (the buffers swap roles as it iterates).
void newton_schulz5_in(NsBuffers& buffers);

// NS5 of each matrix of a stack G (k, rows, cols) of one shape: G cast to `dtype` (transposed when rows > cols) into
// buffers of its own, then newton_schulz5_in. Returned in `dtype`, G's shape.
at::Tensor newton_schulz5_batched(const at::Tensor& G, at::ScalarType dtype);

// A matrix Muon steps, and how many row blocks of equal height it orthogonalises separately (3 for a fused QKV).
struct MuonMatrix {
  at::Tensor param;
  int64_t blocks = 1;
};

// The FLOPs of NS5 on one (r, n) matrix, r <= n: kNsSteps iterations of X X^T (2 r^2 n), b A + c A^2 (2 r^3) and
// B X (2 r^2 n), the multiply-adds of the three GEMMs; what the micro-benchmark divides by its time.
double newton_schulz_flops(int64_t r, int64_t n);

// One stack Newton-Schulz iterates when Muon batches by shape: k (r x n) matrices, r <= n.
struct NsStack {
  int64_t k = 0, r = 0, n = 0;
};

// One Adam group beside Muon: its optimizer and the base rate the schedule's factor scales.
struct AdamGroup {
  std::unique_ptr<AdamW> adamw;
  double base_lr = 0;
};

class Muon final : public Optimizer {
 public:
  // `adam` steps every other parameter, one AdamW per group (none empty); `run_lr` is the run's base rate (--lr), by
  // which set_lr's rate is divided into the schedule's factor (0 leaves every group at its base rate).
  Muon(std::vector<MuonMatrix> matrices, std::vector<AdamGroup> adam, const MuonOptions& options, double run_lr);

  void step() override;
  void zero_grad() override;
  // The schedule's factor lr / run_lr times each group's base rate: options.lr for Muon, base_lr for each Adam group.
  void set_lr(double lr) override;
  // The Adam groups' implementation, as results record the optimizer; that Muon ran is the muon flag's to say.
  std::string name() const override { return adam_.front().adamw->name(); }
  // One momentum buffer per Muon matrix, and the Adam groups' moments.
  int64_t state_bytes() const override;
  // The momentum buffers, then each Adam group's state as a part.
  OptimizerState save_state() const override;
  void load_state(const OptimizerState& state) override;
  // The dtype Newton-Schulz runs in here (options.ns_dtype resolved on the matrices' device).
  MuonNsDtype ns_dtype() const { return ns_dtype_; }
  // The stacks the batched step iterates for these matrices, one per shape group.
  static std::vector<NsStack> ns_stacks(const std::vector<MuonMatrix>& matrices);

 private:
  // One matrix, or one row block of a fused QKV, as Newton-Schulz sees it.
  struct Block {
    size_t matrix;      // index into matrices_
    int64_t row = 0;    // its first row in the matrix
    int64_t rows = 0;   // its height (cols is the matrix's)
    bool tall = false;  // rows > cols: stacked transposed, so that every block of a group is (r, n), r <= n
  };
  // The blocks of one shape after the transpose, orthogonalised together; `by_scale` splits them by their rate's shape
  // scale (c_fc's x2 beside the MLP's c_proj at sqrt_out_over_in), one foreach update per scale.
  struct ShapeGroup {
    int64_t r = 0, n = 0;  // each block's shape once a tall one is transposed, r <= n
    std::vector<Block> blocks;
    std::vector<std::pair<double, std::vector<size_t>>> by_scale;  // scale -> indices into blocks, first seen first
  };
  static std::vector<ShapeGroup> shape_groups(const std::vector<MuonMatrix>& matrices, MuonScale scale, bool batched);

  std::vector<MuonMatrix> matrices_;
  std::vector<at::Tensor> params_;    // matrices_' parameters, in order
  std::vector<ShapeGroup> groups_;    // in the order their first block appears; one block each unless batched
  std::vector<NsBuffers> buffers_;    // one per group when batched, made at the first step
  std::vector<at::Tensor> momentum_;  // like each matrix, made at the first step
  std::vector<AdamGroup> adam_;
  MuonOptions options_;
  double run_lr_;
  double lr_;  // the Muon group's rate for the next step
  MuonNsDtype ns_dtype_;
};

// A GPT's parameters, by name (GPTImpl::named_parameters()), split: every 2-D parameter inside the blocks ("h.N....")
// to Muon, the fused "attn.c_attn.weight" as 3 blocks; the token and position tables ("wte.weight", "wpe.weight") to
// the embedding group, "lm_head.weight" to the head group, the rest, in order, to the others.
struct MuonGroups {
  std::vector<MuonMatrix> matrices;
  std::vector<at::Tensor> embeddings, head, others;
};
MuonGroups muon_groups(const torch::OrderedDict<std::string, at::Tensor>& named);

// Muon over muon_groups(named), with make_adamw(kind) over each non-empty Adam group: `adamw`'s eps, options' betas and
// weight decay, the embeddings at options.embed_lr, the head at options.head_lr, the others at adamw.lr().
std::unique_ptr<Muon> make_muon(AdamWKind kind, const torch::OrderedDict<std::string, at::Tensor>& named,
                                const MuonOptions& options, const AdamWOptions& adamw);

}  // namespace stepwise::bench
