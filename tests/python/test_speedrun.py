"""bench/python's twins of the speedrun's flags against the spec's invariants, as their C++ tests hold the engine to
them (tests/model/rotary_test.cpp, speedrun_flags_test.cpp, tests/bench/optim/muon_test.cpp, lr_schedule_test.cpp):
rotary, qk_norm, relu2, zero_init_proj, logit_softcap, Newton-Schulz and Muon, the trapezoid; and a step.py run with
all of them. tests/bench/speedrun_python_rows_test.cpp holds each twin's losses to the C++ row's, step by step."""

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))

from lr_schedule import LrSchedule  # noqa: E402
from muon import Muon, muon_groups, newton_schulz5, newton_schulz5_batched  # noqa: E402
from step_requests import request, result, run_step, tiny_config, write_request  # noqa: E402

import model  # noqa: E402
from model import (  # noqa: E402
    GPT,
    MLP,
    CausalSelfAttention,
    apply_rotary,
    relu_squared,
    rotary_tables,
    rotation_tables,
    soft_cap,
)


def rotated(x):
    cos, sin = rotation_tables(*rotary_tables(x.size(2), x.size(3), x.device))
    return apply_rotary(x, cos, sin)


# ---------------------------------------------------------------- rotary


def test_rotary_is_the_specs_rotation_of_split_halves():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 40, 16)
    expected = torch.empty_like(x, dtype=torch.float64)
    for t in range(40):
        for i in range(8):
            angle = t * 10000.0 ** (-2 * i / 16)
            x1, x2 = x[:, :, t, i].double(), x[:, :, t, i + 8].double()
            expected[:, :, t, i] = x1 * math.cos(angle) + x2 * math.sin(angle)
            expected[:, :, t, i + 8] = x2 * math.cos(angle) - x1 * math.sin(angle)
    y = rotated(x)
    torch.testing.assert_close(y.double(), expected, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1), rtol=1e-5, atol=1e-5)  # norms kept
    assert torch.equal(y[:, :, 0], x[:, :, 0])  # R_0 = I


def test_rotary_scores_depend_only_on_the_relative_position():
    torch.manual_seed(0)
    q = torch.randn(1, 1, 1, 16).expand(1, 1, 40, 16).contiguous()
    k = torch.randn(1, 1, 1, 16).expand(1, 1, 40, 16).contiguous()
    scores = (rotated(q) @ rotated(k).transpose(2, 3)).squeeze()  # (T, T): [m, n]
    for offset in range(-39, 40):
        diagonal = scores.diagonal(offset)
        torch.testing.assert_close(diagonal, diagonal[0].expand_as(diagonal), rtol=1e-5, atol=1e-5)
    assert abs(scores[0, 0] - scores[5, 0]) > 1e-3  # and it does depend on the difference


def test_rotary_tables_are_built_once_per_shape_device_and_dtype(monkeypatch):
    # model/rotary.cpp's cached_rotary_tables, mirrored: a forward of n_layer blocks, twice, builds the tables once;
    # they are the uncached tables' values, laid out by rotation_tables; another dtype is another entry.
    built = []

    def counted(T, D, device):
        built.append((T, D))
        return rotary_tables(T, D, device)

    monkeypatch.setattr(model, "rotary_tables", counted)
    monkeypatch.setattr(model, "_ROTARY_CACHE", {})
    config = tiny_config(rotary=True)
    gpt = GPT(config)
    idx = torch.randint(0, config.vocab_size, (2, 16))
    gpt(idx)
    gpt(idx)
    assert config.n_layer > 1 and built == [(16, config.n_embd // config.n_head)]
    cos, sin = model.cached_rotary_tables(16, 8, torch.device("cpu"), torch.float32)
    fresh = rotation_tables(*rotary_tables(16, 8, torch.device("cpu")))
    assert all(torch.equal(a, b) for a, b in zip((cos, sin), fresh, strict=True))
    assert model.cached_rotary_tables(16, 8, torch.device("cpu"), torch.float32)[0] is cos
    half = model.cached_rotary_tables(16, 8, torch.device("cpu"), torch.bfloat16)[0]
    assert half.dtype == torch.bfloat16 and torch.equal(half, cos.to(torch.bfloat16))


def test_a_rotary_model_has_no_position_table():
    names = [n for n, _ in GPT(tiny_config(rotary=True)).named_parameters()]
    assert "wpe.weight" not in names and names == [
        n for n, _ in GPT(tiny_config()).named_parameters() if n != "wpe.weight"
    ]
    with pytest.raises(ValueError, match="must be even"):
        GPT(tiny_config(rotary=True, n_embd=60, n_head=4))


# ---------------------------------------------------------------- qk_norm, relu2


def test_qk_norm_gives_every_head_vector_unit_rms():
    attn = CausalSelfAttention(tiny_config(qk_norm=True))
    q, k = attn.position_qk(5 * torch.randn(2, 2, 16, 32), 0.1 * torch.randn(2, 2, 16, 32))
    for t in (q, k):  # eps (float32's, 1.2e-7) moves a unit RMS by eps / (2 mean square): 6e-6 at k's 1e-2
        torch.testing.assert_close(t.pow(2).mean(-1).sqrt(), torch.ones(2, 2, 16), rtol=0, atol=1e-4)
    assert (q @ k.transpose(2, 3) / math.sqrt(32)).abs().max() <= math.sqrt(32) * (1 + 1e-5)


def test_relu2_is_relu_squared_in_the_mlp():
    x = torch.linspace(-3, 3, 61, dtype=torch.float64, requires_grad=True)
    y = relu_squared(x)
    torch.testing.assert_close(y.detach(), torch.where(x > 0, x * x, 0.0).detach())
    y.sum().backward()
    torch.testing.assert_close(x.grad, 2 * torch.relu(x.detach()))
    torch.manual_seed(0)
    mlp = MLP(tiny_config(relu2=True))
    h = torch.randn(2, 8, 64)
    with torch.no_grad():
        torch.testing.assert_close(mlp(h), mlp.c_proj(torch.relu(mlp.c_fc(h)) ** 2))


# ---------------------------------------------------------------- zero_init_proj, logit_softcap


@pytest.mark.parametrize("flash", [False, True])
def test_zero_init_makes_every_block_the_identity_and_a_zero_head_gives_ln_v(flash):
    torch.manual_seed(0)
    plain = GPT(tiny_config(flash=flash))
    torch.manual_seed(0)
    model = GPT(tiny_config(flash=flash, zero_init_proj=True))
    for (name, p), q in zip(model.named_parameters(), plain.parameters()):
        assert torch.equal(p, torch.zeros_like(p) if ".c_proj." in name else q), name
    idx = torch.randint(50257, (2, 16))
    with torch.no_grad():
        embedded = model.wte(idx) + model.wpe(torch.arange(16))
        torch.testing.assert_close(model(idx)[0], model.lm_head(model.ln_f(embedded)), rtol=0, atol=0)
        model.lm_head.weight.zero_()
    _, loss = model(idx, torch.randint(50257, (2, 16)))
    assert loss.item() == pytest.approx(math.log(50257), rel=1e-6)


def test_the_softcap_bounds_the_logits_and_has_slope_one_at_zero():
    capped = soft_cap(torch.linspace(-1000, 1000, 2001), 30.0)
    assert capped.abs().max() <= 30 and soft_cap(torch.zeros(1), 30.0).item() == 0
    small = torch.tensor([1e-3, -1e-3], dtype=torch.float64, requires_grad=True)
    y = soft_cap(small, 30.0)
    torch.testing.assert_close(y.detach(), small.detach(), rtol=1e-6, atol=0)
    y.sum().backward()
    torch.testing.assert_close(small.grad, torch.ones(2, dtype=torch.float64), rtol=0, atol=1e-6)
    torch.manual_seed(0)
    plain = GPT(tiny_config())
    model = GPT(tiny_config(logit_softcap=True, softcap=2.0))
    model.load_state_dict(plain.state_dict())
    idx = torch.randint(50257, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(model(idx)[0], 2.0 * torch.tanh(plain(idx)[0] / 2.0))


def test_the_softcap_fused_with_the_cross_entropy_is_the_cap_then_the_loss():
    """model.py's SoftCappedCrossEntropy (what the model's loss runs with logit_softcap and targets) against soft_cap
    then F.cross_entropy: the loss and the logits' gradient within float32's rounding (the fused loss computes the
    shifted cap with a sigmoid) or bf16's (it computes in float32, the unfused cap in bf16), in float32, pure bf16 and
    under bf16 autocast, as tests/model/speedrun_flags_test.cpp holds the engine's. On a CPU it runs the engine's kernel
    (STEPWISE_KERNELS, which ctest sets), writing over float32 logits: it gets a temporary, as the model's."""
    torch.manual_seed(0)
    raw, targets = 4 * torch.randn(37, 500), torch.randint(500, (37,))
    for dtype, autocast in ((torch.float32, False), (torch.bfloat16, False), (torch.bfloat16, True)):
        fused_x, unfused_x = (raw.to(dtype).clone().requires_grad_(True) for _ in range(2))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            fused = model.SoftCappedCrossEntropy.apply(fused_x.clone(), targets, 3.0)
            unfused = torch.nn.functional.cross_entropy(soft_cap(unfused_x, 3.0), targets)
        assert fused.dtype == unfused.dtype, (dtype, autocast)
        rtol = 1e-6 if dtype == torch.float32 else 1e-2
        torch.testing.assert_close(fused, unfused, rtol=rtol, atol=0, msg=f"{dtype} autocast {autocast}")
        fused.backward()
        unfused.backward()
        assert fused_x.grad.dtype == dtype
        error = (fused_x.grad.double() - unfused_x.grad.double()).norm() / unfused_x.grad.double().norm()
        assert error < rtol, (dtype, autocast, error)
    torch.manual_seed(0)
    capped = GPT(tiny_config(logit_softcap=True, softcap=2.0))
    idx, y = torch.randint(50257, (2, 16)), torch.randint(50257, (2, 16))
    logits, loss = capped(idx, y)
    assert logits is None  # the capped logits are the work the fusion saves
    with torch.no_grad():
        unfused = torch.nn.functional.cross_entropy(capped(idx)[0].flatten(0, 1), y.flatten())
        torch.testing.assert_close(loss, unfused, rtol=1e-6, atol=0)


def test_the_softcap_kernel_refuses_a_leaf_and_asks_for_its_library(monkeypatch):
    """On a CPU the fused loss writes over float32 logits: a leaf that requires grad is refused; and without
    STEPWISE_KERNELS it says which library it needs instead of falling back to other ops."""
    leaf, targets = torch.randn(4, 8, requires_grad=True), torch.zeros(4, dtype=torch.long)
    with pytest.raises(RuntimeError, match="pass a temporary, not a leaf"):
        model.SoftCappedCrossEntropy.apply(leaf, targets, 15.0)
    monkeypatch.setattr(model, "KERNELS_LIBRARY", None)
    with pytest.raises(RuntimeError, match="set STEPWISE_KERNELS to the build's model/libstepwise_kernels.so"):
        model.SoftCappedCrossEntropy.apply(leaf.clone(), targets, 15.0)


def test_the_softcap_kernel_compiles_whole_with_torch_compile(monkeypatch, tmp_path):
    """torch.compile traces the kernel's operators (their Meta kernels give the shapes; the backward returns nothing,
    as functionalisation needs) in one graph, no break, and gives eager's loss and gradient. Inductor's cache of its
    own, as the engine keeps one per CPU capability: a kernel cached under another capability crashes torch 2.11."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    raw, targets = 4 * torch.randn(37, 500), torch.randint(500, (37,))

    def loss_of(x):
        return model.SoftCappedCrossEntropy.apply(x * 2.0, targets, 3.0)  # a temporary, as the model's logits

    grads = []
    for f in (loss_of, torch.compile(loss_of, fullgraph=True)):
        x = raw.clone().requires_grad_(True)
        loss = f(x)
        loss.backward()
        grads.append((loss.detach(), x.grad))
    torch.testing.assert_close(grads[1][0], grads[0][0], rtol=1e-6, atol=0)
    torch.testing.assert_close(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-9)


# ---------------------------------------------------------------- Newton-Schulz and Muon


def test_newton_schulz_lands_in_the_quintics_band_and_keeps_its_invariances():
    torch.manual_seed(0)
    G = torch.randn(64, 256)
    for g in (G, G.t()):
        s = torch.linalg.svdvals(newton_schulz5(g, torch.float32).double())
        assert 0.68 <= s.min() and s.max() <= 1.14
        s16 = torch.linalg.svdvals(newton_schulz5(g, torch.bfloat16).double())
        assert 0.5 < s16.min() and s16.max() < 1.5
    O = newton_schulz5(G, torch.float32)
    torch.testing.assert_close(newton_schulz5(7.0 * G, torch.float32), O, rtol=1e-4, atol=1e-5)
    assert torch.equal(newton_schulz5(G.t(), torch.float32), O.t())
    assert torch.equal(newton_schulz5(torch.zeros(8, 24), torch.float32), torch.zeros(8, 24))


def test_batched_newton_schulz_is_each_matrix_alone_and_torch_optim_muons():
    """Batched by shape, each matrix of the stack is what newton_schulz5 makes of it alone (its own norm: the stack's
    matrices lie 1e-3 to 1e3 apart), and in bf16 what torch.optim.Muon's own Newton-Schulz makes of it (torch 2.11's
    _zeropower_via_newtonschulz: bf16, the same coefficients, its norm clamped at eps where ours adds eps)."""
    import muon
    from torch.optim._muon import DEFAULT_A, DEFAULT_B, DEFAULT_C, EPS, _zeropower_via_newtonschulz

    assert (muon.NS_A, muon.NS_B, muon.NS_C, muon.NS_STEPS) == (DEFAULT_A, DEFAULT_B, DEFAULT_C, 5)
    torch.manual_seed(0)
    scales = torch.tensor([1e-3, 1.0, 40.0, 1e3]).view(4, 1, 1)
    for G in (torch.randn(4, 16, 48) * scales, torch.randn(4, 48, 16) * scales):
        for dtype in (torch.float32, torch.bfloat16):
            batched = newton_schulz5_batched(G, dtype)
            assert batched.shape == G.shape and batched.dtype == dtype
            for k in range(G.size(0)):
                alone = newton_schulz5(G[k], dtype)
                if dtype == torch.float32:
                    torch.testing.assert_close(batched[k], alone, rtol=1e-5, atol=1e-6)
                else:
                    assert (batched[k].double() - alone.double()).norm() < 2e-2 * alone.double().norm()
        for k in range(G.size(0)):
            theirs = _zeropower_via_newtonschulz(G[k], (DEFAULT_A, DEFAULT_B, DEFAULT_C), 5, EPS)
            ours = newton_schulz5_batched(G, torch.bfloat16)[k]
            assert (ours.double() - theirs.double()).norm() < 2e-2 * theirs.double().norm(), k


def ns5_reference(G):
    """The spec's L4 form in float64: a X + b A X + c A (A X)."""
    X = G.double() / (G.double().norm().item() + 1e-7)
    tall = X.size(0) > X.size(1)
    X = X.t() if tall else X
    for _ in range(5):
        A = X @ X.t()
        AX = A @ X
        X = 3.4445 * X - 4.7750 * AX + 2.0315 * A @ AX
    return X.t() if tall else X


def test_two_muon_steps_match_the_formula_in_float64_and_lr_zero_changes_nothing():
    torch.manual_seed(0)
    params = [torch.randn(32, 16, requires_grad=True), torch.randn(48, 16, requires_grad=True)]
    bias = torch.randn(16, requires_grad=True)
    expected = [p.detach().double().clone() for p in params]
    buffers = [torch.zeros_like(e) for e in expected]
    adamw = torch.optim.AdamW([bias], lr=0.0, foreach=False)
    options = {"lr": 0.05, "momentum": 0.9, "scale": "sqrt_out_over_in", "ns_dtype": "fp32"}
    muon = Muon([(params[0], 1), (params[1], 3)], adamw, options, 0.0)
    for _ in range(2):  # two steps, so the momentum enters
        grads = [torch.randn(p.shape) for p in params]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        bias.grad = torch.randn(16)
        muon.step()
        muon.zero_grad()
        for e, buf, g, blocks in zip(expected, buffers, grads, (1, 3)):
            buf.mul_(0.9).add_(g.double())
            u = g.double() + 0.9 * buf
            rows = u.size(0) // blocks
            scale = math.sqrt(max(1.0, rows / u.size(1)))
            for b in range(blocks):
                e[b * rows : (b + 1) * rows] -= 0.05 * scale * ns5_reference(u[b * rows : (b + 1) * rows])
    for p, e in zip(params, expected):
        torch.testing.assert_close(p.detach().double(), e, rtol=1e-5, atol=1e-6)
        assert p.grad is None
    frozen = [p.detach().clone() for p in params]
    muon = Muon([(params[0], 1), (params[1], 3)], adamw, {**options, "lr": 0.0}, 0.0)
    for p in params:
        p.grad = torch.randn(p.shape)
    muon.step()
    assert all(torch.equal(p, f) for p, f in zip(params, frozen))


def test_muon_takes_the_blocks_matrices_as_the_engine_does():
    for flash in (False, True):
        model = GPT(tiny_config(flash=flash))
        matrices, embeddings, head, others = muon_groups(model.named_parameters())
        names = {id(p): n for n, p in model.named_parameters()}
        assert [names[id(p)] for p, _ in matrices] == [
            n for n, p in model.named_parameters() if n.startswith("h.") and p.dim() == 2
        ]
        assert [b for _, b in matrices] == [3 if "c_attn" in names[id(p)] else 1 for p, _ in matrices]
        # The Adam groups the records paired Muon with: the tables, the head, and the rest at the run's rate.
        assert [names[id(p)] for p in embeddings] == ["wte.weight", "wpe.weight"]
        assert [names[id(p)] for p in head] == ["lm_head.weight"]
        assert "h.0.ln_1.weight" in {names[id(p)] for p in others}
        assert not {"wte.weight", "wpe.weight", "lm_head.weight"} & {names[id(p)] for p in others}


# ---------------------------------------------------------------- the trapezoid


def trapezoid(W, N, D):
    """The trapezoid over N steps, warm-up W, cool-down D as the engine resolves it (config.lr_schedule)."""
    spec = {"kind": "trapezoid", "warmup_steps": W, "decay_steps": N, "min_ratio": 0.1, "cooldown_steps": D}
    return LrSchedule(spec, 1.0)


def test_the_trapezoid_is_the_engines():
    # tests/bench/lr_schedule_test.cpp holds the C++ side to the same points.
    s = trapezoid(8, 100, 20)
    assert [s.lr_at(i) for i in (0, 3, 7)] == [1 / 8, 4 / 8, 1.0]
    assert {s.lr_at(i) for i in range(8, 81)} == {1.0}
    assert [s.lr_at(i) for i in (81, 90, 99, 250)] == [19 / 20, 10 / 20, 1 / 20, 1 / 20]
    assert all(s.lr_at(i + 1) <= s.lr_at(i) for i in range(8, 120))
    # The cool-down's length is the engine's (bench/lr_schedule.cpp: cooldown(), tests/bench/lr_schedule_test.cpp): the
    # request carries it resolved.
    assert [trapezoid(0, 7, 2).lr_at(i) for i in (4, 5, 6)] == [1.0, 1.0, 1 / 2]


# ---------------------------------------------------------------- step.py with every flag


# The speedrun's flags as a result's config records them (null options are the flags' that are off).
SPEEDRUN_FLAGS = ["trapezoid", "rotary", "muon", "relu2", "zero_init_proj", "qk_norm", "logit_softcap"]


def speedrun_request(**overrides):
    """The tiny request with every speedrun flag on, and their options; nested overrides update their object."""
    config = dict(
        flags=SPEEDRUN_FLAGS,
        zero_init_head=True,
        softcap=15.0,
        muon_lr=0.02,
        muon_momentum=0.95,
        muon_scale="sqrt_out_over_in",
        muon_ns_dtype="auto",
        # record #8's Adam group (bench/optim/muon.h's MuonOptions defaults)
        muon_adam_beta1=0.9,
        muon_adam_beta2=0.95,
        muon_adam_wd=0.0,
        muon_embed_lr=0.3,
        muon_head_lr=0.002,
        # the trapezoid over 13 steps, its cool-down the engine's for the default fraction 0.4 (5 of 13)
        lr_schedule={"kind": "trapezoid", "warmup_steps": 2, "decay_steps": 13, "cooldown_steps": 5},
        lr=3e-3,
        ns_dtype="bf16",  # the request's: muon_ns_dtype resolved on this CPU
    )
    for key, value in overrides.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) and key in config else value
    return request(**config)


def test_step_trains_with_every_speedrun_flag(tmp_path):
    directory = write_request(tmp_path / "request", speedrun_request())
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    assert doc["status"] == "ok", doc["reason"]
    assert doc["optimizer"] == "forloop"  # the AdamW group's implementation, as the engine records it
    losses = [s["loss"] for s in doc["warmup"] + doc["steps"]]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0] - 0.5


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(muon_momentum=1.0), "'config.muon_momentum': 1.0 is greater than or equal to the maximum of 1"),
        (dict(muon_scale="sqrt"), "'config.muon_scale': 'sqrt' is not one of"),
        (dict(ns_dtype="fp16"), "'ns_dtype' must be null or one of bf16, fp32"),
        (dict(muon_head_lr=-1), "'config.muon_head_lr': -1 is less than or equal to the minimum of 0"),
        (dict(softcap=0.0), "'config.softcap': 0.0 is less than or equal to the minimum of 0"),
        (dict(lr_schedule={"kind": "wsd"}), "'config.lr_schedule.kind': 'wsd' is not one of"),
        (dict(lr_schedule={"cooldown_steps": 0}), "'config.lr_schedule.cooldown_steps': 0 is less than the minimum"),
    ],
)
def test_invalid_speedrun_options_are_usage_errors(tmp_path, change, message):
    torch.manual_seed(0)
    weights = {n: p.detach() for n, p in GPT(tiny_config(rotary=True)).named_parameters()}  # a valid model's
    directory = write_request(tmp_path / "request", speedrun_request(**change), weights=weights)
    run = run_step(directory)
    assert run.returncode == 2 and message in run.stderr, run.stderr
