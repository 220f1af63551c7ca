// Muon against the spec: Newton-Schulz's singular values in the quintic's band (fp32 and bf16), its invariances
// (scale, transpose, zero), batched by shape against one matrix at a time, one and two optimizer steps against the
// formula evaluated in float64 for each record's shape scale and against torch.optim.Muon's steps on the same
// gradients, lr 0, the schedule's factor, the split of a GPT's parameters, and both attention layouts stepping alike.
#include "bench/optim/muon.h"
#include "bench/device.h"
#include "bench/run_config.h"
#include "bench/source_dir.h"
#include "bench/step/train_state.h"
#include "model/gpt.h"
#include "model/weights.h"
#include "tests/support.h"

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/utils.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

namespace stepwise::bench {
namespace {

// ---------------------------------------------------------------- Newton-Schulz

// The singular values of NS5(G) (float64).
at::Tensor singular_values(const at::Tensor& G, at::ScalarType dtype) {
  return at::linalg_svdvals(newton_schulz5(G, dtype).to(at::kDouble));
}

// In exact arithmetic every normalised singular value >= 0.01 ends in [0.682, 1.134] after five iterations (the spec's
// derivation); a Gaussian 64 x 256 matrix's smallest normalised singular value is about 0.03. bf16 rounds the iterates:
// the speedrun's own docstring allows (0.5, 1.5). Measured here: [0.682, 1.134] in fp32, [0.680, 1.135] in bf16.
TEST(NewtonSchulz, SingularValuesLandInTheQuinticsBand) {
  torch::manual_seed(0);
  const auto G = at::randn({64, 256});
  for (const auto& g : {G, G.t()}) {
    const auto s32 = singular_values(g, at::kFloat);
    EXPECT_EQ(s32.numel(), 64);
    EXPECT_GE(s32.min().item<double>(), 0.68);
    EXPECT_LE(s32.max().item<double>(), 1.14);
    const auto s16 = singular_values(g, at::kBFloat16);
    EXPECT_GT(s16.min().item<double>(), 0.5);
    EXPECT_LT(s16.max().item<double>(), 1.5);
  }
}

TEST(NewtonSchulz, IsScaleInvariantTransposesAndMapsZeroToZero) {
  torch::manual_seed(0);
  const auto G = at::randn({48, 80});
  const auto O = newton_schulz5(G, at::kFloat);
  // alpha G / ||alpha G|| differs from G / ||G|| by rounding only; five iterations keep it at that scale.
  for (const double alpha : {1e-3, 7.0, 1e4})
    EXPECT_TRUE(testing::all_close(newton_schulz5(alpha * G, at::kFloat), O, {1e-4, 1e-5})) << alpha;
  // A tall matrix is orthogonalised through its transpose: the same ops on the same numbers.
  EXPECT_TRUE(at::equal(newton_schulz5(G.t(), at::kFloat), O.t()));
  EXPECT_TRUE(at::equal(newton_schulz5(at::zeros({48, 80}), at::kFloat), at::zeros({48, 80})));
  EXPECT_TRUE(at::equal(newton_schulz5(at::zeros({48, 80}), at::kBFloat16), at::zeros({48, 80}, at::kBFloat16)));
}

// NS5 acts on the singular values only: in G's singular bases, U^T NS5(G) V is diagonal.
TEST(NewtonSchulz, KeepsTheSingularVectors) {
  torch::manual_seed(0);
  const auto G = at::randn({32, 96}, at::kDouble);
  const auto [U, S, Vh] = at::linalg_svd(G, /*full_matrices=*/false);
  const auto inner =
      at::matmul(at::matmul(U.t(), newton_schulz5(G.to(at::kFloat), at::kFloat).to(at::kDouble)), Vh.t());
  const auto off_diagonal = inner - at::diag_embed(inner.diagonal());
  EXPECT_LT(off_diagonal.abs().max().item<double>(), 1e-4);  // measured 7.2e-7
  EXPECT_GT(inner.diagonal().min().item<double>(), 0.68);
}

TEST(NewtonSchulz, RefusesWhatIsNotAMatrix) {
  EXPECT_THROW(newton_schulz5(at::ones({4}), at::kFloat), std::invalid_argument);
  EXPECT_THROW(newton_schulz5_batched(at::ones({4, 4}), at::kFloat), std::invalid_argument);
}

// Batched, each matrix of the stack is orthogonalised as newton_schulz5 orthogonalises it alone: normalised by its own
// norm (the stack's matrices here are scaled 1e-3 to 1e3 apart, so one norm for the stack would leave some far from the
// quintic's band), tall stacks through their transpose. The same ops on the same numbers, bmm for mm: measured equal to
// the bit in fp32 and bf16 on an AVX-512 Xeon; fp32 is held to float32's class, bf16 to 2% of the norm.
TEST(NewtonSchulz, BatchedOrthogonalisesEachMatrixAsItsOwn) {
  torch::manual_seed(0);
  const auto scales = at::tensor({1e-3, 1.0, 40.0, 1e3}, at::kFloat).view({4, 1, 1});
  for (const auto& G : {at::randn({4, 16, 48}) * scales, at::randn({4, 48, 16}) * scales})
    for (const auto dtype : {at::kFloat, at::kBFloat16}) {
      const auto batched = newton_schulz5_batched(G, dtype);
      ASSERT_EQ(batched.sizes(), G.sizes());
      EXPECT_EQ(batched.scalar_type(), dtype);
      for (int64_t k = 0; k < G.size(0); ++k) {
        const auto alone = newton_schulz5(G[k], dtype);
        if (dtype == at::kFloat)
          EXPECT_TRUE(testing::all_close(batched[k], alone, {1e-5, 1e-6})) << G.sizes() << " matrix " << k;
        else
          EXPECT_LT(testing::relative_error(batched[k], alone), 2e-2) << G.sizes() << " matrix " << k;
      }
    }
}

// Muon refits its buffers every step: the same stack keeps the same memory (a fresh one is page-faulted on a CPU), and
// the float stage is there exactly when asked for.
TEST(NewtonSchulz, BuffersAreKeptFromFitToFitAndStagedOnlyWhenAsked) {
  NsBuffers buffers;
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  buffers.fit(3, 8, 24, bf16);
  EXPECT_FALSE(buffers.staged.defined());
  buffers.fit(3, 8, 24, bf16, /*float_stage=*/true);
  ASSERT_TRUE(buffers.staged.defined());
  EXPECT_EQ(buffers.staged.scalar_type(), at::kFloat);
  EXPECT_EQ(buffers.staged.sizes(), buffers.X.sizes());
  const void* X = buffers.X.data_ptr();
  const void* staged = buffers.staged.data_ptr();
  buffers.fit(3, 8, 24, bf16, /*float_stage=*/true);
  EXPECT_EQ(buffers.X.data_ptr(), X);
  EXPECT_EQ(buffers.staged.data_ptr(), staged);
  buffers.fit(2, 8, 24, bf16, /*float_stage=*/true);
  EXPECT_EQ(buffers.X.sizes(), (at::IntArrayRef{2, 8, 24}));
  EXPECT_EQ(buffers.staged.sizes(), buffers.X.sizes());
  EXPECT_EQ(buffers.A.sizes(), (at::IntArrayRef{2, 8, 8}));
}

// ---------------------------------------------------------------- the optimizer against its formula in float64

// NS5 in float64 written as the spec's L4 form, a X + b A X + c A (A X), apart from the implementation's addmm form.
at::Tensor ns5_reference(const at::Tensor& G) {
  auto X = G.to(at::kDouble);
  X = X / (X.norm().item<double>() + 1e-7);
  const bool tall = X.size(0) > X.size(1);
  if (tall) X = X.t();
  for (int i = 0; i < 5; ++i) {
    const auto A = at::matmul(X, X.t());
    const auto AX = at::matmul(A, X);
    X = 3.4445 * X + (-4.7750) * AX + 2.0315 * at::matmul(A, AX);
  }
  return tall ? X.t() : X;
}

struct Fixture {
  std::vector<at::Tensor> params;  // a 32x16, a 16x48, a fused 3x(16x16) and a bias for AdamW
  std::vector<MuonMatrix> matrices() const { return {{params[0], 1}, {params[1], 1}, {params[2], 3}}; }
};

Fixture make_fixture() {
  torch::manual_seed(0);
  Fixture s;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{32, 16}, {16, 48}, {48, 16}, {16}})
    s.params.push_back(at::randn(shape).requires_grad_(true));
  return s;
}

// The gradient of parameter i at step k: fixed, so the reference sees the same.
at::Tensor gradient(const at::Tensor& p, int64_t i, int64_t k) {
  torch::manual_seed(100 * k + i);
  return at::randn(p.sizes(), p.options());
}

// Muon with `o`, its Newton-Schulz dtype resolved for the fixture's device as the engine resolves it.
std::unique_ptr<Muon> make(const Fixture& s, const MuonOptions& o, double adamw_lr = 0.0) {
  std::vector<AdamGroup> adam;
  adam.push_back({make_adamw(AdamWKind::Forloop, {s.params[3]}, AdamWOptions().lr(adamw_lr)), adamw_lr});
  const auto resolved = MuonOptions(o).ns_dtype(resolved_ns_dtype(o.ns_dtype(), s.params[0].device()));
  return std::make_unique<Muon>(s.matrices(), std::move(adam), resolved, adamw_lr);
}

void step(Muon& muon, const Fixture& s, int64_t k) {
  for (size_t i = 0; i < s.params.size(); ++i) s.params[i].mutable_grad() = gradient(s.params[i], i, k);
  muon.step();
  muon.zero_grad();
}

// Two steps (so the momentum enters) of each scale rule against float64: buf = mu buf + g, u = g + mu buf, each row
// block orthogonalised, W -= lr scale(out, in) NS5(u). Measured worst error 2.9e-7 absolute with fp32 NS, 4.3e-3 with
// the speedrun's bf16 NS (sqrt_max_dim's lr_eff is the largest here, 0.35).
TEST(Muon, TwoStepsMatchTheFormulaInFloat64ForEachScaleRule) {
  for (const auto rule : {MuonScale::None, MuonScale::SqrtMaxDim, MuonScale::SqrtOutOverIn})
    for (const auto ns : {MuonNsDtype::Float32, MuonNsDtype::Bf16}) {
      const Fixture s = make_fixture();
      std::vector<at::Tensor> expected, buffers;
      for (int i = 0; i < 3; ++i) {
        expected.push_back(s.params[i].detach().to(at::kDouble));
        buffers.push_back(at::zeros_like(expected.back()));
      }
      const auto options = MuonOptions().lr(0.05).momentum(0.9).scale(rule).ns_dtype(ns);
      auto muon = make(s, options);
      for (int64_t k = 0; k < 2; ++k) {
        step(*muon, s, k);
        const int64_t blocks[] = {1, 1, 3};
        for (int i = 0; i < 3; ++i) {
          const auto g = gradient(s.params[i], i, k).to(at::kDouble);
          buffers[i] = 0.9 * buffers[i] + g;
          const auto u = g + 0.9 * buffers[i];
          const int64_t rows = u.size(0) / blocks[i], cols = u.size(1);
          const double scale = rule == MuonScale::None         ? 1.0
                               : rule == MuonScale::SqrtMaxDim ? std::sqrt(std::max(rows, cols))
                                                               : std::sqrt(std::max(1.0, double(rows) / cols));
          for (int64_t b = 0; b < blocks[i]; ++b)
            expected[i].narrow(0, b * rows, rows).sub_(0.05 * scale * ns5_reference(u.narrow(0, b * rows, rows)));
        }
      }
      const auto tol = ns == MuonNsDtype::Float32 ? testing::Tolerance{1e-5, 1e-6} : testing::Tolerance{0, 2e-2};
      for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(testing::all_close(s.params[i].detach(), expected[i], tol))
            << to_string(rule) << " " << to_string(ns) << " parameter " << i;
    }
}

// Batched by shape, the step is the one-matrix-at-a-time step it replaced (MuonOptions::batched off, the step before
// issue 57), over matrices that share shapes only once transposed (a tall 64 x 16 beside two wide 16 x 64, whose
// rates differ at sqrt_out_over_in) and a fused 3-block matrix beside a square one: three steps, momentum included.
TEST(Muon, BatchedByShapeTakesTheStepOfOneMatrixAtATime) {
  const std::vector<std::vector<int64_t>> shapes = {{64, 16}, {16, 64}, {48, 16}, {16, 64}, {16, 16}, {16}};
  const std::vector<int64_t> blocks = {1, 1, 3, 1, 1};
  for (const auto ns : {MuonNsDtype::Float32, MuonNsDtype::Bf16}) {
    std::vector<std::vector<at::Tensor>> params(2);
    std::vector<std::unique_ptr<Muon>> muons;
    for (const bool batched : {false, true}) {
      torch::manual_seed(0);
      auto& mine = params[muons.size()];
      for (const auto& shape : shapes) mine.push_back(at::randn(shape).requires_grad_(true));
      std::vector<MuonMatrix> matrices;
      for (size_t i = 0; i < blocks.size(); ++i) matrices.push_back({mine[i], blocks[i]});
      std::vector<AdamGroup> adam;
      adam.push_back({make_adamw(AdamWKind::Forloop, {mine.back()}, AdamWOptions().lr(1e-3)), 1e-3});
      const auto options = MuonOptions().lr(0.05).ns_dtype(ns).batched(batched);
      muons.push_back(std::make_unique<Muon>(std::move(matrices), std::move(adam), options, 1e-3));
    }
    for (int64_t k = 0; k < 3; ++k)
      for (size_t side = 0; side < 2; ++side) {
        for (size_t i = 0; i < shapes.size(); ++i) params[side][i].mutable_grad() = gradient(params[side][i], i, k);
        muons[side]->step();
        muons[side]->zero_grad();
      }
    const auto tol = ns == MuonNsDtype::Float32 ? testing::Tolerance{1e-5, 1e-6} : testing::Tolerance{0, 2e-3};
    for (size_t i = 0; i < shapes.size(); ++i)
      EXPECT_TRUE(testing::all_close(params[1][i].detach(), params[0][i].detach(), tol))
          << to_string(ns) << " parameter " << i;
  }
}

// ---------------------------------------------------------------- against torch.optim.Muon

// tests/fixtures/torch_muon_cases.json: two steps of torch.optim.Muon (the pinned torch's own) on fixed gradients, for
// the matrices the engine's step meets: a tall one, a wide one of its shape once transposed (one shape group here), a
// square one and a fused QKV of three blocks (torch steps each block as a parameter of its own). tests/python/
// torch_muon_cases.py writes it and tests/python/test_torch_muon_cases.py regenerates it, so the numbers are torch's.
// This Muon, batched by shape as the engine runs it, with Newton-Schulz in bf16 (torch.optim.Muon's only dtype), takes
// the same steps from the same values: each matrix's update within the case's tolerance of torch's, relative in
// Frobenius norm (the generator's docstring says why each). At momentum 0.75 (1 - mu = 1/4, so torch's EMA momentum
// is the records' sum scaled exactly) both Newton-Schulz see the same bf16 numbers: measured equal to the bit on an
// AVX-512 Xeon (AMX) and with ATen and oneDNN at AVX2, 2.8e-3 apart with ATen's scalar kernels, held to 5e-3 (a
// coefficient 1e-3 off moves it 1.5e-2 or more); at the records' 0.95, 2.4e-2 apart, held to 5e-2.
TEST(Muon, TakesTorchOptimMuonsStepsOnTheSameGradients) {
  const auto path = source_dir() / "tests" / "fixtures" / "torch_muon_cases.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing";
  const auto fixture = nlohmann::json::parse(in);
  // The records' quintic, typed in muon.h, is torch.optim.Muon's default.
  EXPECT_EQ(fixture["ns_coefficients"].get<std::vector<double>>(), (std::vector<double>{kNsA, kNsB, kNsC}));
  EXPECT_EQ(fixture["ns_steps"].get<int64_t>(), kNsSteps);
  EXPECT_EQ(fixture["eps"].get<double>(), kNsEps);
  const auto& matrices = fixture["matrices"];
  const auto values = [&](const nlohmann::json& list, size_t i) {  // float32, as the fixture's are, in i's shape
    return at::tensor(list.get<std::vector<float>>(), at::kFloat)
        .view(matrices[i]["shape"].get<std::vector<int64_t>>());
  };
  ASSERT_FALSE(fixture["cases"].empty());
  for (const auto& c : fixture["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<at::Tensor> params;
    std::vector<MuonMatrix> muon_matrices;
    for (size_t i = 0; i < matrices.size(); ++i) {
      params.push_back(values(matrices[i]["initial"], i).requires_grad_(true));
      muon_matrices.push_back({params.back(), matrices[i]["blocks"].get<int64_t>()});
    }
    const auto bias = at::zeros({4}).requires_grad_(true);  // the Adam group Muon needs, at rate 0
    std::vector<AdamGroup> adam;
    adam.push_back({make_adamw(AdamWKind::Forloop, {bias}, AdamWOptions().lr(0.0)), 0.0});
    const auto options = MuonOptions()
                             .lr(fixture["muon_lr"].get<double>())
                             .momentum(c["momentum"].get<double>())
                             .scale(kMuonScaleNames.from_string(c["muon_scale"].get<std::string>()))
                             .ns_dtype(MuonNsDtype::Bf16);
    Muon muon(std::move(muon_matrices), std::move(adam), options, 0.0);
    const size_t steps = matrices[0]["gradients"].size();
    ASSERT_GE(steps, 2u) << "two steps at least, so the momentum enters";
    for (size_t k = 0; k < steps; ++k) {
      for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = values(matrices[i]["gradients"][k], i);
      bias.mutable_grad() = at::zeros({4});
      muon.step();
      muon.zero_grad();
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const auto initial = values(matrices[i]["initial"], i).to(at::kDouble);
      const auto theirs = values(c["final"][i], i).to(at::kDouble) - initial;
      const auto mine = params[i].detach().to(at::kDouble) - initial;
      EXPECT_LE(testing::relative_error(mine, theirs), c["tolerance"].get<double>()) << matrices[i]["name"];
    }
  }
}

TEST(Muon, TheScaleRulesAreTheRecords) {
  EXPECT_EQ(muon_scale(MuonScale::None, 3072, 768), 1.0);
  EXPECT_DOUBLE_EQ(muon_scale(MuonScale::SqrtMaxDim, 3072, 768) * 0.00036, 0.00036 * std::sqrt(3072.0));  // #4: .01995
  EXPECT_NEAR(muon_scale(MuonScale::SqrtMaxDim, 768, 768) * 0.00036, 0.00998, 1e-5);
  EXPECT_EQ(muon_scale(MuonScale::SqrtOutOverIn, 3072, 768), 2.0);  // c_fc, record #8 on
  EXPECT_EQ(muon_scale(MuonScale::SqrtOutOverIn, 768, 3072), 1.0);  // the MLP's c_proj
  EXPECT_EQ(muon_scale(MuonScale::SqrtOutOverIn, 768, 768), 1.0);
  for (const auto& name : kMuonScaleNames.names()) EXPECT_EQ(to_string(kMuonScaleNames.from_string(name)), name);
  try {
    kMuonScaleNames.from_string("sqrt");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none, sqrt_max_dim, sqrt_out_over_in"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kMuonNsDtypeNames.from_string("fp16"), std::invalid_argument);
  EXPECT_EQ(MuonOptions().scale(), MuonScale::SqrtOutOverIn) << "record #8 on is the default";
}

// Auto: bf16 where the device has it, fp32 where a CPU would emulate it (bench/measure/env.h says which this is).
TEST(Muon, AutoRunsNewtonSchulzInBf16WhereTheDeviceRunsItNatively) {
  const c10::Device cpu(c10::kCPU), cuda(c10::kCUDA, 0);
  EXPECT_EQ(resolved_ns_dtype(MuonNsDtype::Auto, cuda), MuonNsDtype::Bf16);
  EXPECT_EQ(resolved_ns_dtype(MuonNsDtype::Auto, cpu), cpu_bf16_emulated() ? MuonNsDtype::Float32 : MuonNsDtype::Bf16);
  for (const auto chosen : {MuonNsDtype::Bf16, MuonNsDtype::Float32})
    for (const auto& device : {cpu, cuda}) EXPECT_EQ(resolved_ns_dtype(chosen, device), chosen);
  const Fixture s = make_fixture();
  EXPECT_EQ(make(s, MuonOptions())->ns_dtype(), resolved_ns_dtype(MuonNsDtype::Auto, cpu));
  std::vector<AdamGroup> adam;
  adam.push_back({make_adamw(AdamWKind::Forloop, {s.params[3]}, AdamWOptions()), 0.0});
  EXPECT_THROW(Muon(s.matrices(), std::move(adam), MuonOptions(), 0.0), std::invalid_argument)
      << "optim/ cannot read the device: Muon takes the dtype resolved";
  for (const auto& name : kMuonNsDtypeNames.names()) EXPECT_EQ(to_string(kMuonNsDtypeNames.from_string(name)), name);
}

TEST(Muon, LearningRateZeroLeavesTheMatricesExactlyAsTheyWere) {
  const Fixture s = make_fixture();
  std::vector<at::Tensor> before;
  for (const auto& p : s.params) before.push_back(p.detach().clone());
  auto muon = make(s, MuonOptions().lr(0), /*adamw_lr=*/1e-2);
  for (int64_t k = 0; k < 3; ++k) step(*muon, s, k);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(at::equal(s.params[i], before[i])) << "matrix " << i;
  EXPECT_FALSE(at::equal(s.params[3], before[3])) << "the AdamW group steps at its own rate";
  for (const auto& p : s.params) EXPECT_FALSE(p.grad().defined()) << "zero_grad sets every gradient to none";
}

// The schedule sets the AdamW rate; the Muon group follows by the same factor.
TEST(Muon, SetLrScalesTheMuonRateByTheScheduleFactor) {
  const Fixture a = make_fixture();
  auto halved = make(a, MuonOptions().lr(0.02), /*adamw_lr=*/1e-3);
  halved->set_lr(0.5e-3);
  step(*halved, a, 0);
  const Fixture b = make_fixture();
  auto direct = make(b, MuonOptions().lr(0.01), /*adamw_lr=*/0.5e-3);
  step(*direct, b, 0);
  for (size_t i = 0; i < a.params.size(); ++i) EXPECT_TRUE(at::equal(a.params[i], b.params[i])) << i;
}

TEST(Muon, StateIsOneBufferPerMatrixBesidesAdamWsMoments) {
  const Fixture s = make_fixture();
  auto muon = make(s, MuonOptions());
  EXPECT_EQ(muon->state_bytes(), 4 * (32 * 16 + 16 * 48 + 48 * 16) + 2 * 4 * 16);
  EXPECT_EQ(muon->name(), "forloop") << "results record the AdamW implementation";
}

// ---------------------------------------------------------------- on a GPT

TEST(Muon, TakesTheBlocksMatricesAndLeavesTheRestToAdamW) {
  for (const bool flash : {false, true}) {
    model::GPT gpt(testing::small_config().flash(flash));
    const auto groups = muon_groups(gpt->named_parameters());
    const auto named = gpt->named_parameters();
    size_t matrices = 0, others = 0;
    for (const auto& item : named) {
      const bool muon = item.key().rfind("h.", 0) == 0 && item.value().dim() == 2;
      if (muon) {
        ASSERT_LT(matrices, groups.matrices.size());
        EXPECT_TRUE(groups.matrices[matrices].param.is_same(item.value())) << item.key();
        EXPECT_EQ(groups.matrices[matrices++].blocks, item.key().find("c_attn") != std::string::npos ? 3 : 1);
      } else if (item.key() != "wte.weight" && item.key() != "wpe.weight" && item.key() != "lm_head.weight") {
        ASSERT_LT(others, groups.others.size());
        EXPECT_TRUE(groups.others[others++].is_same(item.value())) << item.key();
      }
    }
    EXPECT_EQ(matrices, groups.matrices.size());
    EXPECT_EQ(others, groups.others.size());
    EXPECT_EQ(matrices, flash ? 2u * 4 : 2u * 6);  // per layer: c_attn or q, k, v; c_proj; c_fc; mlp c_proj
    ASSERT_EQ(groups.embeddings.size(), 2u);
    EXPECT_TRUE(groups.embeddings[0].is_same(named["wte.weight"]) && groups.embeddings[1].is_same(named["wpe.weight"]));
    ASSERT_EQ(groups.head.size(), 1u);
    EXPECT_TRUE(groups.head[0].is_same(named["lm_head.weight"]));
  }
}

// What the micro-benchmark times Newton-Schulz on and divides by its time: the stacks the batched step iterates
// (small_config: width 64, 2 layers; the fused c_attn's three blocks beside c_proj, c_fc transposed beside the MLP's
// c_proj), and each matrix's FLOPs, the three GEMMs' multiply-adds counted by hand for a 2 x 3 matrix.
TEST(Muon, NewtonSchulzStacksAndFlopsAreTheBatchedStepsGemms) {
  model::GPT gpt(testing::small_config().flash(true));
  const auto stacks = Muon::ns_stacks(muon_groups(gpt->named_parameters()).matrices);
  ASSERT_EQ(stacks.size(), 2u);
  EXPECT_EQ(std::tuple(stacks[0].k, stacks[0].r, stacks[0].n), std::tuple(int64_t{8}, int64_t{64}, int64_t{64}));
  EXPECT_EQ(std::tuple(stacks[1].k, stacks[1].r, stacks[1].n), std::tuple(int64_t{4}, int64_t{64}, int64_t{256}));
  // X X^T: 2 x 2 x 3 x 2 = 24; b A + c A^2: 2 x 2 x 2 x 2 = 16; B X: 24; five times.
  EXPECT_EQ(newton_schulz_flops(2, 3), 5 * (24 + 16 + 24));
}

// The Adam Muon pairs with is record #8's (speedrun-anchors T8 (c)), not the baseline's AdamW: one Adam step of each
// group against torch's formula with its own rate, betas (0.9, 0.95) and no weight decay; the schedule's factor
// scales every group's rate alike.
TEST(Muon, PairsWithTheRecordsAdamEachGroupAtItsOwnRate) {
  const MuonOptions defaults;
  EXPECT_EQ(defaults.adam_beta1(), 0.9);
  EXPECT_EQ(defaults.adam_beta2(), 0.95);
  EXPECT_EQ(defaults.adam_weight_decay(), 0.0);
  EXPECT_EQ(defaults.embed_lr(), 0.3);
  EXPECT_EQ(defaults.head_lr(), 0.002);
  EXPECT_EQ(std::string(kMuonAdamRecord).rfind("#8", 0), 0u);

  model::GPT gpt(testing::small_config());
  const auto named = gpt->named_parameters();
  std::map<std::string, at::Tensor> before;
  for (const auto& item : named) before[item.key()] = item.value().detach().clone();
  const auto options = MuonOptions().ns_dtype(MuonNsDtype::Float32).embed_lr(0.1).head_lr(0.004);
  const double run_lr = 1e-3, factor = 0.5;  // the schedule at half the base rate
  auto muon = make_muon(AdamWKind::Forloop, named, options, AdamWOptions().lr(run_lr));
  muon->set_lr(run_lr * factor);
  for (const auto& item : named) item.value().mutable_grad() = at::randn_like(item.value());
  std::map<std::string, at::Tensor> grads;
  for (const auto& item : named) grads[item.key()] = item.value().grad().clone();
  muon->step();
  // Adam's first step: m = (1 - b1) g, v = (1 - b2) g^2, bias-corrected to g and g^2: W -= lr g / (|g| + eps).
  const auto adam_step = [&](const std::string& name, double lr) {
    const auto& g = grads[name];
    return before[name] - lr * g / (g.abs() + 1e-8);
  };
  const auto expect = [&](const std::string& name, double lr) {
    EXPECT_TRUE(testing::all_close(named[name].detach(), adam_step(name, lr), {1e-5, 1e-6})) << name;
  };
  expect("wte.weight", 0.1 * factor);
  expect("wpe.weight", 0.1 * factor);
  expect("lm_head.weight", 0.004 * factor);
  expect("ln_f.weight", run_lr * factor);
}

// The fused QKV is orthogonalised as three blocks, as the reference layout's separate q, k and v: one Muon step from
// the same weights and batch leaves the same weights in both layouts.
TEST(Muon, BothAttentionLayoutsTakeTheSameStep) {
  RunConfig c = testing::tiny_cpu_run();
  c.model = testing::small_config();
  c.muon = true;
  // Adam's groups at the run's rate: its first step is lr g / (|g| + eps), which turns the layouts' float32
  // differences in a head gradient near eps into lr-sized ones, and this test is about the attention's matrices.
  c.muon_options.ns_dtype(MuonNsDtype::Float32).embed_lr(1e-3).head_lr(1e-3);
  c.adamw.lr(1e-3);
  RunConfig flash = c;
  flash.model.flash(true);
  auto reference = initial_model(c), fused = initial_model(flash);
  auto a = make_optimizer(c, reference), b = make_optimizer(flash, fused);
  torch::manual_seed(1);
  const auto idx = at::randint(model::kGpt2VocabSize, {2, 16}, at::kLong);
  const auto targets = at::randint(model::kGpt2VocabSize, {2, 16}, at::kLong);
  reference->loss(idx, targets).backward();
  fused->loss(idx, targets).backward();
  a->step();
  b->step();
  model::GPT back(c.model);
  model::copy_weights(fused, back);
  const auto expected = reference->named_parameters();
  for (const auto& item : back->named_parameters())
    EXPECT_TRUE(testing::all_close(item.value(), expected[item.key()], {1e-5, 1e-6})) << item.key();
}

TEST(Muon, IsWhatTheTrainStateBuildsWithTheMuonFlag) {
  RunConfig c = testing::tiny_cpu_run();
  c.muon = true;
  TrainState state = make_train_state(c, nullptr);
  const auto* muon = dynamic_cast<const Muon*>(state.optimizer.get());
  ASSERT_NE(muon, nullptr);
  c.muon = false;
  EXPECT_EQ(dynamic_cast<const Muon*>(make_train_state(c, nullptr).optimizer.get()), nullptr);
}

}  // namespace
}  // namespace stepwise::bench
