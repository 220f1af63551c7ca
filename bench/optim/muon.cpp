// Muon: Newton-Schulz orthogonalisation, the per-record shape scales, the optimizer that steps the blocks' matrices
// with it and their other parameters with AdamW, and the split of a GPT's parameters between the two.
#include "bench/optim/muon.h"

#include "model/number.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace stepwise::bench {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string to_string(MuonScale s) { return kMuonScaleNames.to_string(s); }

double muon_scale(MuonScale rule, int64_t out, int64_t in) {
  switch (rule) {
    case MuonScale::None: return 1.0;
    case MuonScale::SqrtMaxDim: return std::sqrt(static_cast<double>(std::max(out, in)));
    case MuonScale::SqrtOutOverIn: return std::sqrt(std::max(1.0, static_cast<double>(out) / static_cast<double>(in)));
  }
  return 1.0;
}

std::string to_string(MuonNsDtype d) { return kMuonNsDtypeNames.to_string(d); }

at::Tensor newton_schulz5(const at::Tensor& G, at::ScalarType dtype) {
  if (G.dim() != 2) throw std::invalid_argument("newton_schulz5 takes a matrix, got " + std::to_string(G.dim()) + "-D");
  at::Tensor X = G.to(dtype);
  // Every singular value now <= 1, where the iteration converges. The eps goes in as muon.py's float does
  // (model/number.h): one aten::add, not the Scalar overload's two.
  X = X / (at::linalg_vector_norm(X) + model::number(kNsEps));
  const bool tall = G.size(0) > G.size(1);
  if (tall) X = X.t();  // (r, n), r = min(rows, cols): A below is r x r
  for (int64_t i = 0; i < kNsSteps; ++i) {
    const at::Tensor A = at::mm(X, X.t());                                   // (r, r)
    const at::Tensor B = at::addmm(A, A, A, /*beta=*/kNsB, /*alpha=*/kNsC);  // b A + c A^2
    X = at::addmm(X, B, X, /*beta=*/kNsA, /*alpha=*/1.0);                    // a X + B X, (r, n)
  }
  return tall ? X.t() : X;
}

double newton_schulz_flops(int64_t r, int64_t n) {
  const double R = static_cast<double>(r), N = static_cast<double>(n);
  return static_cast<double>(kNsSteps) * (2 * R * R * N + 2 * R * R * R + 2 * R * R * N);
}

void NsBuffers::fit(int64_t k, int64_t r, int64_t n, const at::TensorOptions& options, bool float_stage) {
  if (X.defined() && X.sizes() == at::IntArrayRef{k, r, n} && X.options().dtype() == options.dtype() &&
      staged.defined() == float_stage)
    return;
  X = at::empty({k, r, n}, options);
  next = at::empty({k, r, n}, options);
  A = at::empty({k, r, r}, options);
  B = at::empty({k, r, r}, options);
  staged = float_stage ? at::empty({k, r, n}, options.dtype(at::kFloat)) : at::Tensor();
}

void newton_schulz5_in(NsBuffers& buffers) {
  at::Tensor& X = buffers.X;  // (k, r, n)
  if (X.dim() != 3 || X.size(1) > X.size(2))
    throw std::invalid_argument("newton_schulz5_in takes a stack of wide matrices (k, r, n), r <= n");
  // Each matrix by its own norm, (k, 1, 1): as newton_schulz5 normalises one.
  X.div_(at::linalg_vector_norm(X, 2, at::IntArrayRef{1, 2}, /*keepdim=*/true) + model::number(kNsEps));
  for (int64_t i = 0; i < kNsSteps; ++i) {
    at::bmm_out(buffers.A, X, X.transpose(1, 2));                                                // A = X X^T, (k, r, r)
    at::baddbmm_out(buffers.B, buffers.A, buffers.A, buffers.A, /*beta=*/kNsB, /*alpha=*/kNsC);  // b A + c A^2
    at::baddbmm_out(buffers.next, X, buffers.B, X, /*beta=*/kNsA, /*alpha=*/1.0);                // a X + B X, (k, r, n)
    std::swap(X, buffers.next);
  }
}

at::Tensor newton_schulz5_batched(const at::Tensor& G, at::ScalarType dtype) {
  if (G.dim() != 3)
    throw std::invalid_argument("newton_schulz5_batched takes a stack of matrices, got " + std::to_string(G.dim()) +
                                "-D");
  const bool tall = G.size(1) > G.size(2);
  const at::Tensor wide = tall ? G.transpose(1, 2) : G;  // (k, r, n), r = min(rows, cols)
  NsBuffers buffers;
  buffers.fit(wide.size(0), wide.size(1), wide.size(2), G.options().dtype(dtype));
  buffers.X.copy_(wide);
  newton_schulz5_in(buffers);
  return tall ? buffers.X.transpose(1, 2) : buffers.X;
}

std::vector<Muon::ShapeGroup> Muon::shape_groups(const std::vector<MuonMatrix>& matrices, MuonScale scale,
                                                 bool batched) {
  std::vector<ShapeGroup> groups;
  for (size_t i = 0; i < matrices.size(); ++i) {
    const int64_t rows = matrices[i].param.size(0) / matrices[i].blocks, cols = matrices[i].param.size(1);
    const int64_t r = std::min(rows, cols), n = std::max(rows, cols);
    for (int64_t b = 0; b < matrices[i].blocks; ++b) {
      auto found = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.r == r && g.n == n; });
      if (!batched || found == groups.end()) found = groups.insert(groups.end(), ShapeGroup{.r = r, .n = n});
      ShapeGroup& group = *found;
      const double s = muon_scale(scale, rows, cols);
      auto slot =
          std::find_if(group.by_scale.begin(), group.by_scale.end(), [&](const auto& e) { return e.first == s; });
      if (slot == group.by_scale.end()) slot = group.by_scale.insert(slot, {s, {}});
      slot->second.push_back(group.blocks.size());
      group.blocks.push_back({i, b * rows, rows, rows > cols});
    }
  }
  return groups;
}

std::vector<NsStack> Muon::ns_stacks(const std::vector<MuonMatrix>& matrices) {
  std::vector<NsStack> stacks;
  for (const auto& group : shape_groups(matrices, MuonScale::None, /*batched=*/true))
    stacks.push_back({static_cast<int64_t>(group.blocks.size()), group.r, group.n});
  return stacks;
}

Muon::Muon(std::vector<MuonMatrix> matrices, std::vector<AdamGroup> adam, const MuonOptions& options, double run_lr)
    : matrices_(std::move(matrices)), adam_(std::move(adam)), options_(options), run_lr_(run_lr), lr_(options.lr()) {
  if (adam_.empty()) throw std::invalid_argument("Muon needs an Adam group for the parameters it does not step");
  if (matrices_.empty()) throw std::invalid_argument("Muon needs at least one matrix");
  // Auto depends on the device and the CPU's bf16 (bench/run_config.h resolves it, above this folder).
  if (options.ns_dtype() == MuonNsDtype::Auto)
    throw std::invalid_argument("Muon runs Newton-Schulz in a resolved dtype: pass resolved_ns_dtype()'s, not auto");
  ns_dtype_ = options.ns_dtype();
  if (!(options.lr() >= 0)) throw std::invalid_argument("Muon's lr must be >= 0, got " + std::to_string(options.lr()));
  if (!(options.momentum() >= 0 && options.momentum() < 1))
    throw std::invalid_argument("Muon's momentum must be in [0, 1), got " + std::to_string(options.momentum()));
  for (const auto& m : matrices_)
    if (m.param.dim() != 2 || m.blocks < 1 || m.param.size(0) % m.blocks != 0)
      throw std::invalid_argument("Muon steps matrices whose rows split into equal blocks");
  for (const auto& m : matrices_) params_.push_back(m.param);
  groups_ = shape_groups(matrices_, options.scale(), options.batched());
  if (options.batched()) buffers_.resize(groups_.size());
}

void Muon::step() {
  torch::NoGradGuard no_grad;
  const auto grads = gradients_of(params_, "Muon");
  if (momentum_.empty())
    for (const auto& p : params_) momentum_.push_back(at::zeros_like(p));
  const double mu = options_.momentum();
  const auto dtype = ns_dtype_ == MuonNsDtype::Bf16 ? at::kBFloat16 : at::kFloat;
  // buf <- g + mu buf: one pass over each matrix (out aliases buf element for element), where mul_ then add_ made two.
  for (size_t i = 0; i < params_.size(); ++i) at::add_out(momentum_[i], grads[i], momentum_[i], mu);
  const auto rows_of = [](const at::Tensor& t, const Block& b) { return t.narrow(0, b.row, b.rows); };  // a block
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ShapeGroup& group = groups_[g];
    at::Tensor O;  // (k, r, n) orthogonalised together; unbatched, each group is one (r, n) block
    if (options_.batched()) {
      NsBuffers& buffers = buffers_[g];
      const at::Tensor& first = params_[group.blocks.front().matrix];
      // Nesterov's g + mu buf, written straight into the stack in the Newton-Schulz dtype (computed in float, cast
      // as G.to(dtype) casts): no float copy of it, no stacking pass. On a CPU in bf16, through the group's float
      // stack instead (the same bits): ATen's CPU kernels cast between dtypes through a fresh float tensor per call,
      // and for the MLP's blocks each is above glibc's mmap threshold, so page-faulted every step.
      buffers.fit(static_cast<int64_t>(group.blocks.size()), group.r, group.n, first.options().dtype(dtype),
                  /*float_stage=*/dtype != at::kFloat && first.device().is_cpu());
      const at::Tensor& staged = buffers.staged;  // (k, r, n) float32, or undefined
      const at::Tensor& into = staged.defined() ? staged : buffers.X;
      for (size_t k = 0; k < group.blocks.size(); ++k) {
        const Block& b = group.blocks[k];
        at::Tensor slot = into[static_cast<int64_t>(k)];  // (r, n)
        if (b.tall) slot = slot.t();
        at::add_out(slot, rows_of(grads[b.matrix], b), rows_of(momentum_[b.matrix], b), mu);
      }
      if (staged.defined()) buffers.X.copy_(staged);  // one cast of the whole stack
      newton_schulz5_in(buffers);
      O = buffers.X;
      if (staged.defined()) O = staged.copy_(O);  // back to float once, for the update's float adds
    } else {
      const Block& b = group.blocks.front();
      const at::Tensor u = at::add(rows_of(grads[b.matrix], b), rows_of(momentum_[b.matrix], b), mu);  // Nesterov
      O = newton_schulz5(b.tall ? u.t() : u, dtype).unsqueeze(0);
    }
    for (const auto& [scale, members] : group.by_scale) {
      std::vector<at::Tensor> targets, updates;
      for (const size_t k : members) {
        const auto& b = group.blocks[k];
        targets.push_back(rows_of(params_[b.matrix], b));
        updates.push_back(b.tall ? O[static_cast<int64_t>(k)].t() : O[static_cast<int64_t>(k)]);
      }
      at::_foreach_add_(targets, updates, -lr_ * scale);  // W <- W - lr_eff O
    }
  }
  for (auto& group : adam_) group.adamw->step();
}

void Muon::zero_grad() {
  for (auto& m : matrices_) m.param.mutable_grad().reset();
  for (auto& group : adam_) group.adamw->zero_grad();
}

void Muon::set_lr(double lr) {
  const double factor = run_lr_ > 0 ? lr / run_lr_ : 1.0;  // the schedule's, the same for every group
  for (auto& group : adam_) group.adamw->set_lr(group.base_lr * factor);
  lr_ = options_.lr() * factor;
}

OptimizerState Muon::save_state() const {
  OptimizerState out{copies_of(momentum_), {}, {}};
  for (const auto& group : adam_) out.parts.push_back(group.adamw->save_state());
  return out;
}

void Muon::load_state(const OptimizerState& state) {
  put_back(momentum_, state.tensors);
  for (size_t i = 0; i < adam_.size(); ++i) adam_[i].adamw->load_state(state.parts.at(i));
}

int64_t Muon::state_bytes() const {
  int64_t bytes = bytes_of(params_);
  for (const auto& group : adam_) bytes += group.adamw->state_bytes();
  return bytes;
}

MuonGroups muon_groups(const torch::OrderedDict<std::string, at::Tensor>& named) {
  MuonGroups groups;
  for (const auto& item : named) {
    const std::string& name = item.key();
    if (starts_with(name, "h.") && item.value().dim() == 2)
      groups.matrices.push_back({item.value(), ends_with(name, ".attn.c_attn.weight") ? 3 : 1});
    else if (name == "wte.weight" || name == "wpe.weight")
      groups.embeddings.push_back(item.value());
    else if (name == "lm_head.weight")
      groups.head.push_back(item.value());
    else
      groups.others.push_back(item.value());
  }
  return groups;
}

std::unique_ptr<Muon> make_muon(AdamWKind kind, const torch::OrderedDict<std::string, at::Tensor>& named,
                                const MuonOptions& options, const AdamWOptions& adamw) {
  auto groups = muon_groups(named);
  std::vector<AdamGroup> adam;
  for (auto& [params, lr] :
       {std::pair{std::move(groups.embeddings), options.embed_lr()},
        std::pair{std::move(groups.head), options.head_lr()}, std::pair{std::move(groups.others), adamw.lr()}}) {
    if (params.empty()) continue;
    const auto group_options = AdamWOptions(adamw)
                                   .lr(lr)
                                   .beta1(options.adam_beta1())
                                   .beta2(options.adam_beta2())
                                   .weight_decay(options.adam_weight_decay());
    adam.push_back({make_adamw(kind, params, group_options), lr});
  }
  return std::make_unique<Muon>(std::move(groups.matrices), std::move(adam), options, adamw.lr());
}

}  // namespace stepwise::bench
