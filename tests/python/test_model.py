"""bench/python/model.py against the C++ model: parameter names, each flag against the reference layout with
carried-over weights (as tests/model/flag_equivalence_test.cpp), causality, and the order dropout draws in."""

import math
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # model, step, stats, loader

from step_requests import tiny_config  # noqa: E402

from model import GPT, cross_entropy  # noqa: E402

# GPTImpl/BlockImpl/CausalSelfAttentionImpl/MLPImpl/LayerNormImpl's register_module/register_parameter calls, in
# order, for the tiny preset's reference layout (qkv_bias off: query/key/value have no bias; c_proj has one).
TINY_REFERENCE_PARAMETERS = [
    "wte.weight",
    "wpe.weight",
    "h.0.ln_1.weight",
    "h.0.ln_1.bias",
    "h.0.attn.query.weight",
    "h.0.attn.key.weight",
    "h.0.attn.value.weight",
    "h.0.attn.c_proj.weight",
    "h.0.attn.c_proj.bias",
    "h.0.ln_2.weight",
    "h.0.ln_2.bias",
    "h.0.mlp.c_fc.weight",
    "h.0.mlp.c_fc.bias",
    "h.0.mlp.c_proj.weight",
    "h.0.mlp.c_proj.bias",
    "h.1.ln_1.weight",
    "h.1.ln_1.bias",
    "h.1.attn.query.weight",
    "h.1.attn.key.weight",
    "h.1.attn.value.weight",
    "h.1.attn.c_proj.weight",
    "h.1.attn.c_proj.bias",
    "h.1.ln_2.weight",
    "h.1.ln_2.bias",
    "h.1.mlp.c_fc.weight",
    "h.1.mlp.c_fc.bias",
    "h.1.mlp.c_proj.weight",
    "h.1.mlp.c_proj.bias",
    "ln_f.weight",
    "ln_f.bias",
    "lm_head.weight",
]
# GPTConfig::parameter_count() for tiny: 2*V*C + context*C + L*(4C^2 + C + 8C^2 + 5C + 4C) + 2C.
TINY_PARAMETER_COUNT = 2 * 50257 * 64 + 128 * 64 + 2 * (4 * 64 * 64 + 64 + 8 * 64 * 64 + 5 * 64 + 4 * 64) + 2 * 64


def parameters(model):
    return {name: p.detach() for name, p in model.named_parameters()}


def test_parameter_names_equal_the_cpp_models():
    reference = GPT(tiny_config())
    assert [n for n, _ in reference.named_parameters()] == TINY_REFERENCE_PARAMETERS
    assert sum(p.numel() for p in reference.parameters()) == TINY_PARAMETER_COUNT == 6540800
    assert [n for n, _ in reference.named_buffers()] == ["h.0.attn.mask", "h.1.attn.mask"]

    fused = [n for n, _ in GPT(tiny_config(flash=True)).named_parameters()]
    expected = []
    for name in TINY_REFERENCE_PARAMETERS:
        if ".attn.query." in name:
            expected.append(name.replace("query", "c_attn"))
        elif ".attn.key." not in name and ".attn.value." not in name:
            expected.append(name)
    assert fused == expected
    assert list(GPT(tiny_config(dynamic_mask=True)).named_buffers()) == []  # no stored mask
    assert list(GPT(tiny_config(flash=True)).named_buffers()) == []

    with_bias = [n for n, _ in GPT(tiny_config(qkv_bias=True)).named_parameters()]
    assert with_bias[4:10] == [
        "h.0.attn.query.weight",
        "h.0.attn.query.bias",
        "h.0.attn.key.weight",
        "h.0.attn.key.bias",
        "h.0.attn.value.weight",
        "h.0.attn.value.bias",
    ]
    padded = dict(GPT(tiny_config(vocab_padding=True)).named_parameters())
    assert padded["wte.weight"].shape == padded["lm_head.weight"].shape == (50304, 64)


def carried(source, target):
    """model/weights.cpp's copy_weights on name -> tensor dicts: `target`'s tensors filled from `source`, fused
    c_attn rows q | k | v <-> separate projections, vocabulary rows shared up to the smaller size."""
    out = {}
    for name, dst in target.items():
        if name in source:
            src, t = source[name], dst.clone()
            rows = min(src.shape[0], t.shape[0])
            t[:rows] = src[:rows]  # the whole tensor when the shapes agree
            out[name] = t
        elif ".attn.c_attn." in name:
            prefix, leaf = name.split("c_attn.")
            out[name] = torch.cat([source[f"{prefix}{part}.{leaf}"] for part in ("query", "key", "value")])
        else:
            for i, part in enumerate(("query", "key", "value")):
                if f".attn.{part}." in name:
                    prefix, leaf = name.split(f"{part}.")
                    out[name] = source[f"{prefix}c_attn.{leaf}"].chunk(3)[i]
    assert out.keys() == target.keys()
    return out


def load(model, tensors):
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(tensors[name])


FLAGS = {
    "dynamic_mask": dict(dynamic_mask=True),
    "native_layers": dict(native_layers=True),
    "flash": dict(flash=True),
    "flash_math": dict(flash=True, sdpa_backend="math"),
    "vocab_padding": dict(vocab_padding=True),
    "all_four": dict(dynamic_mask=True, native_layers=True, flash=True, vocab_padding=True),
}


@pytest.mark.parametrize("flag", FLAGS)
def test_each_flag_computes_the_reference_function(flag):
    torch.manual_seed(0)
    reference, variant = GPT(tiny_config()), GPT(tiny_config(**FLAGS[flag]))
    load(variant, carried(parameters(reference), parameters(variant)))
    idx, targets = torch.randint(50257, (2, 16)), torch.randint(50257, (2, 16))

    ref_logits, _ = reference(idx)
    var_logits = variant(idx)[0][..., :50257]  # real tokens only
    torch.testing.assert_close(var_logits, ref_logits, rtol=1e-5, atol=1e-5)
    # The loss over the real vocabulary in both, so the padded logits stay out of the gradients compared.
    cross_entropy(ref_logits, targets).backward()
    cross_entropy(var_logits, targets).backward()
    grads = carried({n: p.grad for n, p in variant.named_parameters()}, parameters(reference))
    for name, p in reference.named_parameters():
        assert (grads[name] - p.grad).norm() <= 1e-4 * p.grad.norm(), name


def test_padded_vocabulary_logits_take_part_in_the_loss():
    torch.manual_seed(0)
    reference, padded = GPT(tiny_config()), GPT(tiny_config(vocab_padding=True))
    load(padded, carried(parameters(reference), parameters(padded)))
    idx, targets = torch.randint(50257, (2, 16)), torch.randint(50257, (2, 16))
    logits, loss = padded(idx, targets)
    assert logits.shape == (2, 16, 50304)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits.view(-1, 50304), targets.view(-1)))
    assert not torch.allclose(loss, reference(idx, targets)[1])  # 47 more logits in the softmax


@pytest.mark.parametrize("flag", ["reference", "dynamic_mask", "flash"])
def test_attention_is_causal(flag):
    torch.manual_seed(0)
    model = GPT(tiny_config(**({} if flag == "reference" else {flag: True})))
    idx = torch.randint(50257, (2, 32))
    changed = idx.clone()
    changed[:, 20] = (changed[:, 20] + 1) % 50257
    a, b = model(idx)[0], model(changed)[0]
    torch.testing.assert_close(a[:, :20], b[:, :20], rtol=0, atol=0)  # earlier positions see nothing later
    assert not torch.allclose(a[:, 20:], b[:, 20:])


def test_layers_match_their_formulas():
    x = torch.randn(3, 5, 64)
    from model import LayerNorm, gelu_tanh

    ln = LayerNorm(64, native=False)
    with torch.no_grad():
        ln.weight.uniform_()
        ln.bias.uniform_()
    expected = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)
    torch.testing.assert_close(ln(x), ln.weight * expected + ln.bias)
    native = LayerNorm(64, native=True)
    native.load_state_dict(ln.state_dict())
    torch.testing.assert_close(native(x), ln(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gelu_tanh(x, native=False), gelu_tanh(x, native=True), rtol=1e-5, atol=1e-6)
    assert gelu_tanh(torch.tensor(1.0), native=False).item() == pytest.approx(
        0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715))
    )


def dropout_calls(model, idx):
    """(module name, input shape) of each dropout in the order the forward draws its random numbers."""
    calls = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Dropout):
            module.register_forward_pre_hook(lambda m, args, name=name: calls.append((name, tuple(args[0].shape))))
    model(idx)
    return calls


def test_dropout_draws_in_the_cpp_forward_order():
    # GPTImpl::forward: drop(wte + wpe), then each block; BlockImpl::forward: attn (whose attn_dropout acts on the
    # (B, H, T, T) weights), resid_dropout, mlp, resid_dropout. The same module order means the same generator draws.
    torch.manual_seed(0)
    model = GPT(tiny_config(dropout=0.1)).train()
    B, T, C, H = 2, 16, 64, 2
    per_block = lambda i: [
        (f"h.{i}.attn.attn_dropout", (B, H, T, T)),
        (f"h.{i}.resid_dropout", (B, T, C)),
        (f"h.{i}.resid_dropout", (B, T, C)),
    ]
    assert dropout_calls(model, torch.randint(50257, (B, T))) == [("drop", (B, T, C))] + per_block(0) + per_block(1)
    # flash: the attention dropout is inside scaled_dot_product_attention, attn_dropout is never called
    flash = GPT(tiny_config(dropout=0.1, flash=True)).train()
    assert [n for n, _ in dropout_calls(flash, torch.randint(50257, (B, T)))] == [
        "drop",
        "h.0.resid_dropout",
        "h.0.resid_dropout",
        "h.1.resid_dropout",
        "h.1.resid_dropout",
    ]


def test_dropout_masks_follow_the_seed():
    torch.manual_seed(0)
    model = GPT(tiny_config(dropout=0.1)).train()
    idx = torch.randint(50257, (2, 16))
    torch.manual_seed(124)
    a = model(idx)[0]
    torch.manual_seed(124)
    b = model(idx)[0]
    c = model(idx)[0]  # the generator moved on: new masks
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(b, c)
    model.eval()
    torch.testing.assert_close(model(idx)[0], model(idx)[0], rtol=0, atol=0)


def test_config_validation_and_context():
    with pytest.raises(ValueError, match="n_head"):
        GPT(tiny_config(n_head=3))
    with pytest.raises(ValueError, match="exceeds the model's context length 128"):
        GPT(tiny_config())(torch.zeros(1, 129, dtype=torch.long))
    assert tiny_config(vocab_padding=True).padded_vocab_size == 50304
    assert tiny_config().padded_vocab_size == 50257


def test_native_layer_norm_uses_gpt2s_epsilon_where_it_matters():
    # At a variance near 1e-5 the epsilon (1e-5, GPT-2's and the C++ model's) is half the denominator, so 1e-6 or
    # 1e-4 moves the output by tens of percent; at unit variance it would hide below any tolerance.
    from model import LayerNorm

    torch.manual_seed(0)
    x = 0.003 * torch.randn(4, 7, 64, dtype=torch.float64) + 0.5  # (B, T, C), variance ≈ 9e-6
    var = x.var(-1, keepdim=True, unbiased=False)
    assert 3e-6 < var.min().item() and var.max().item() < 3e-5
    native, formula = LayerNorm(64, native=True).double(), LayerNorm(64, native=False).double()
    with torch.no_grad():
        native.weight.uniform_(0.5, 1.5)
        native.bias.uniform_(-0.1, 0.1)
    formula.load_state_dict(native.state_dict())
    # A hand reference, element by element: (x - mean) / sqrt(var + 1e-5) * weight + bias.
    c = x.shape[-1]
    mean = [[sum(x[b, t].tolist()) / c for t in range(x.shape[1])] for b in range(x.shape[0])]
    hand = torch.empty_like(x)
    for b in range(x.shape[0]):
        for t in range(x.shape[1]):
            row = x[b, t].tolist()
            v = sum((e - mean[b][t]) ** 2 for e in row) / c
            hand[b, t] = torch.tensor([(e - mean[b][t]) / math.sqrt(v + 1e-5) for e in row], dtype=torch.float64)
    hand = hand * native.weight.detach() + native.bias.detach()
    with torch.no_grad():
        torch.testing.assert_close(native(x), hand, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(formula(x), hand, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(native(x), formula(x), rtol=1e-6, atol=1e-6)
