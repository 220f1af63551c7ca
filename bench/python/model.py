"""stepwise's GPT in PyTorch Python: the same module tree, parameter names and operation order as model/*.cpp.

The reference layout is Raschka's 00_orig.py; each GPTConfig flag replaces one piece exactly as the C++ model
does, so weights written by the C++ side load here by name and the same batches give the same losses. Dropout
draws its random numbers in the C++ forward order: drop (embeddings), then per block attn_dropout (or SDPA's own
dropout), resid_dropout after attention, resid_dropout after the MLP.
"""

import contextlib
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SDPA_BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "math": SDPBackend.MATH,
}
VOCAB_PAD_MULTIPLE = 64  # vocab_padding: 50257 -> 50304
LAYER_NORM_EPS = 1e-5  # GPT-2's, and nn.LayerNorm's default
ROTARY_BASE = 10000.0  # rotary: model/rotary.h's kRotaryBase
# The engine's shared library of its own CPU kernels (model/softcap_kernel.h), which the engine names for its Python
# rows: logit_softcap's loss on a CPU runs the same kernel on both sides.
KERNELS_LIBRARY = os.environ.get("STEPWISE_KERNELS")
if KERNELS_LIBRARY:
    torch.ops.load_library(KERNELS_LIBRARY)


@dataclass
class GPTConfig:
    """The model's dimensions and layout as the request's config gives them (bench/python/request.py: settings); their
    bounds and choices are results/schema.json's, checked there, so only what spans several fields is checked here."""

    vocab_size: int
    context_length: int
    n_embd: int
    n_head: int
    n_layer: int
    dropout: float
    qkv_bias: bool = False
    # The model flags; False is the reference implementation.
    dynamic_mask: bool = False  # causal mask built per forward instead of a stored context x context buffer
    native_layers: bool = False  # F.layer_norm and F.gelu(approximate="tanh") instead of the formulas
    flash: bool = False  # one fused QKV projection and scaled_dot_product_attention(is_causal=True)
    sdpa_backend: str = "auto"  # flash only: "auto" or a key of SDPA_BACKENDS, pinned while attention runs
    vocab_padding: bool = False  # vocabulary rounded up to a multiple of 64; padded ids never occur in data
    # The speedrun's model changes (model/config.h): each changes the function trained.
    rotary: bool = False  # rotary position embeddings on q and k (rotary_tables, apply_rotary); no wpe
    qk_norm: bool = False  # q and k RMS-normalised per head, no weight, PyTorch's default eps
    relu2: bool = False  # relu(x)^2 in the MLP instead of GELU
    zero_init_proj: bool = False  # attention and MLP c_proj (weight and bias) start at zero
    zero_init_head: bool = False  # with zero_init_proj: lm_head starts at zero too (record #8's)
    logit_softcap: bool = False  # softcap * tanh(logits / softcap) before the loss
    softcap: float | None = None  # with logit_softcap: the cap (the engine's --softcap, from the request's config)

    @property
    def padded_vocab_size(self):
        if not self.vocab_padding:
            return self.vocab_size
        return (self.vocab_size + VOCAB_PAD_MULTIPLE - 1) // VOCAB_PAD_MULTIPLE * VOCAB_PAD_MULTIPLE

    def validate(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_head ({self.n_head}) must divide n_embd ({self.n_embd})")
        if self.rotary and (self.n_embd // self.n_head) % 2:
            raise ValueError(
                f"rotary rotates pairs of dimensions: the head dimension (n_embd / n_head = "
                f"{self.n_embd // self.n_head}) must be even"
            )
        if self.logit_softcap and self.softcap is None:
            raise ValueError("logit_softcap needs its softcap")


class LayerNorm(nn.Module):
    def __init__(self, dim, native):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))  # the reference calls it `scale`
        self.bias = nn.Parameter(torch.zeros(dim))  # the reference calls it `shift`
        self.native = native

    def forward(self, x):  # (..., C)
        if self.native:
            return F.layer_norm(x, self.weight.shape, self.weight, self.bias, LAYER_NORM_EPS)
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)  # biased, as the reference
        return self.weight * ((x - mean) / torch.sqrt(var + LAYER_NORM_EPS)) + self.bias


def gelu_tanh(x, native):
    if native:
        return F.gelu(x, approximate="tanh")
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))


class ReluSquared(torch.autograd.Function):
    """relu2's activation relu(x)^2 in two ops each way, model/relu_squared.cpp's: autograd's own graph of
    square(relu(x)) takes five backward, each a fresh tensor of the MLP's hidden size; (g r) 2 is the same numbers."""

    @staticmethod
    def forward(ctx, x):
        r = F.relu(x)  # (B, T, 4C), kept for backward in place of x
        ctx.save_for_backward(r)
        return r * r

    @staticmethod
    def backward(ctx, grad):
        (r,) = ctx.saved_tensors
        return (grad * r).mul_(2.0)  # d(r^2)/dx = 2 r, zero where x <= 0 as r is


def relu_squared(x):
    """relu2's activation, model/relu_squared.cpp's relu_squared."""
    return ReluSquared.apply(x)


def rotary_tables(T, D, device):
    """model/rotary.cpp's rotary_tables: cos and sin of t * base^(-2i/D), each (T, D/2) float32, computed in float64."""
    exponent = torch.arange(0, D // 2, dtype=torch.float64, device=device) * (-2.0 / D)  # (D/2)
    frequency = torch.pow(ROTARY_BASE, exponent)  # (D/2)
    angle = torch.outer(torch.arange(0, T, dtype=torch.float64, device=device), frequency)  # (T, D/2)
    return torch.cos(angle).to(torch.float32), torch.sin(angle).to(torch.float32)


# cached_rotary_tables' tables, one pair per (T, D, device, dtype), kept for the process as model/rotary.cpp keeps them.
_ROTARY_CACHE = {}


def rotation_tables(cos, sin):
    """model/rotary.cpp's rotation_tables: rotary_tables' (T, D/2) cos and sin laid out as apply_rotary multiplies by
    them, each (T, D): [cos, cos] and [sin, -sin]."""
    return torch.cat([cos, cos], -1), torch.cat([sin, -sin], -1)


def cached_rotary_tables(T, D, device, dtype):
    """rotation_tables of rotary_tables(T, D, device), cast to `dtype`, built once per (T, D, device, dtype):
    model/rotary.cpp's cached_rotary_tables. Every layer's attention asks for them at every forward, and rebuilding
    them there (float64 arange, pow, outer, cos and sin, the layout, the casts) repeats n_layer times per step the work
    the C++ step does once. Under torch.compile the tables are built inside the traced graph instead (a global dict
    written while tracing would be a side effect Dynamo replays); the compiler folds them into constants."""
    if torch.compiler.is_compiling():
        cos, sin = rotation_tables(*rotary_tables(T, D, device))
        return cos.to(dtype), sin.to(dtype)
    key = (T, D, torch.device(device), dtype)
    if key not in _ROTARY_CACHE:
        cos, sin = rotation_tables(*rotary_tables(T, D, device))  # (T, D) each, float32
        _ROTARY_CACHE[key] = (cos.to(dtype), sin.to(dtype))
    return _ROTARY_CACHE[key]


def apply_rotary(x, cos, sin):
    """x (B, H, T, D) rotated in split halves, as model/rotary.cpp: y1 = x1 cos + x2 sin, y2 = x2 cos - x1 sin, computed
    as x [cos, cos] + roll(x, D/2) [sin, -sin] from rotation_tables' (T, D) tables: the same bits in four ops each way."""
    c, s = cos.to(x.dtype), sin.to(x.dtype)  # (T, D)
    return x * c + torch.roll(x, x.size(-1) // 2, -1) * s  # (B, H, T, D)


def soft_cap(logits, cap):
    """logit_softcap, model/softcap.cpp: cap * tanh(logits / cap), in the logits' dtype."""
    return torch.tanh(logits / cap) * cap


# d/dz of 2 c sigmoid(2 z / c): 4 s (1 - s).
SHIFTED_CAP_SLOPE = 4.0


def shifted_soft_cap(logits, cap):
    """model/softcap.cpp's shifted_soft_cap: 2 cap sigmoid(2 logits / cap) = soft_cap(logits) + cap, in float32, what
    the loss computes (no softmax sees the shift, and the sigmoid costs a fraction of the tanh on a CPU)."""
    scaled = logits / (cap / 2) if logits.dtype == torch.float32 else logits.to(torch.float32).div_(cap / 2)
    return scaled.sigmoid_().mul_(2 * cap)


class SoftCappedCrossEntropy(torch.autograd.Function):
    """logit_softcap's training loss, model/softcap.cpp's soft_capped_cross_entropy: the cap fused with the
    cross-entropy, for logits (N, V) and targets (N). The forward keeps the shifted cap (float32) and its
    log-probabilities; the backward turns them into the logits' gradient in place, (softmax - onehot) 4 g / N times
    s (1 - s), the sigmoid s recovered in place as shifted / (2 cap), with no (N, V) tensor of its own. The same ops
    in the same order as the C++ side; the backward consumes what the forward saved, so it runs once."""

    @staticmethod
    def forward(ctx, logits, targets, cap):
        ctx.dtype, ctx.cap = logits.dtype, cap
        ctx.kernel = logits.is_cpu
        if logits.is_cpu:
            if not KERNELS_LIBRARY:
                raise RuntimeError(
                    "logit_softcap's loss on a CPU runs stepwise's kernel: set STEPWISE_KERNELS to the build's "
                    "model/libstepwise_kernels.so (the engine sets it for its Python rows)"
                )
            # float32 logits become their shifted cap in place (the caller's temporary, consumed); others a copy
            in_place = logits.dtype == torch.float32 and logits.is_contiguous()
            if in_place and logits.is_leaf and logits.requires_grad:
                raise RuntimeError(
                    "soft_capped_cross_entropy consumes float32 logits (they become the shifted cap): pass a "
                    "temporary, not a leaf that requires grad"
                )
            shifted = logits if in_place else logits.to(torch.float32).contiguous()  # (N, V), float32
            loss, lse = torch.ops.stepwise.shifted_cap_cross_entropy_(shifted, targets, cap)
            if in_place:
                torch.autograd.graph.increment_version(logits)  # whatever else saved the logits now fails loudly
            ctx.save_for_backward(shifted, lse, targets)
        else:
            shifted = shifted_soft_cap(logits, cap)  # (N, V), float32
            logp = torch.log_softmax(shifted, 1)  # (N, V), float32
            ctx.save_for_backward(shifted, logp, targets)
            loss = F.nll_loss(logp, targets)
        # the loss in the dtype F.cross_entropy gives: the logits' own, float32 under autocast. Never a .to() of its
        # own dtype: torch.compile differentiates that alias of the loss as zero (tests/python/test_speedrun.py).
        loss_dtype = torch.float32 if torch.is_autocast_enabled(logits.device.type) else logits.dtype
        return loss if loss.dtype == loss_dtype else loss.to(loss_dtype)

    @staticmethod
    def backward(ctx, grad_loss):
        if ctx.kernel:
            shifted, lse, targets = ctx.saved_tensors  # the shifted cap becomes the gradient, in place
            torch.ops.stepwise.shifted_cap_cross_entropy_backward_(shifted, lse, targets, grad_loss, ctx.cap)
            return shifted.to(ctx.dtype), None, None
        shifted, grad, targets = ctx.saved_tensors  # the log-probabilities become the gradient, in place
        n = grad.size(0)
        g4 = grad_loss.to(torch.float32) / float(n) * SHIFTED_CAP_SLOPE  # the mean's share, times the cap's 4
        grad.exp_().mul_(g4)  # softmax 4 g / N
        grad.scatter_add_(1, targets.unsqueeze(1), g4.neg().expand(n, 1))  # - 4 g / N at each row's target
        shifted.div_(2 * ctx.cap)  # s = sigmoid(2 z / cap), to its rounding
        torch.ops.aten.sigmoid_backward.grad_input(grad, shifted, grad_input=grad)  # times s (1 - s)
        return grad.to(ctx.dtype), None, None


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        C = config.n_embd
        self.config = config
        if config.flash:
            self.c_attn = nn.Linear(C, 3 * C, bias=config.qkv_bias)  # rows ordered q | k | v
        else:
            self.query = nn.Linear(C, C, bias=config.qkv_bias)
            self.key = nn.Linear(C, C, bias=config.qkv_bias)
            self.value = nn.Linear(C, C, bias=config.qkv_bias)
            if not config.dynamic_mask:
                N = config.context_length
                # float32 ones above the diagonal, as the reference's buffer (not a parameter: never in weights)
                self.register_buffer("mask", torch.triu(torch.ones(N, N), diagonal=1))
        self.c_proj = nn.Linear(C, C)
        self.attn_dropout = nn.Dropout(config.dropout)

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        return self.forward_sdpa(x) if self.config.flash else self.forward_reference(x)

    def position_qk(self, q, k):
        """q and k (B, H, T, D) as attention takes them: RMS-normalised per head (qk_norm), then rotated (rotary)."""
        D = q.size(-1)
        if self.config.qk_norm:
            q, k = F.rms_norm(q, (D,)), F.rms_norm(k, (D,))
        if self.config.rotary:
            # (T, D/2) each, in q's dtype, built once per shape, device and dtype (not per layer and step)
            cos, sin = cached_rotary_tables(q.size(2), D, q.device, q.dtype)
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        return q, k

    def causal_mask(self, T, device):  # (T, T) bool, True above the diagonal
        if self.config.dynamic_mask:
            return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
        # The reference converts the whole stored buffer to bool on every forward, then slices.
        return self.mask.to(torch.bool)[:T, :T]

    def forward_reference(self, x):
        B, T, C = x.shape
        H, D = self.config.n_head, C // self.config.n_head
        q = self.query(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = self.key(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        v = self.value(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        q, k = self.position_qk(q, k)
        scores = q @ k.transpose(2, 3)  # (B, H, T, T)
        scores.masked_fill_(self.causal_mask(T, x.device), -math.inf)  # masked before the scaling, as the reference
        weights = self.attn_dropout(torch.softmax(scores / math.sqrt(D), dim=-1))
        y = (weights @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y)

    def forward_sdpa(self, x):
        B, T, C = x.shape
        H, D = self.config.n_head, C // self.config.n_head
        qkv = self.c_attn(x).view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)  # (3, B, H, T, D)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B, H, T, D) each
        q, k = self.position_qk(q, k)
        with sdpa_pin(self.config.sdpa_backend):
            dropout = self.config.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)  # (B, H, T, D)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


def sdpa_pin(backend):
    """Enables only the named SDPA backend inside the block and restores the global setting after; auto pins none."""
    return contextlib.nullcontext() if backend == "auto" else sdpa_kernel(SDPA_BACKENDS[backend])


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.native_gelu = config.native_layers
        self.relu2 = config.relu2

    def forward(self, x):  # (B, T, C) -> (B, T, 4C) -> (B, T, C)
        hidden = self.c_fc(x)
        return self.c_proj(relu_squared(hidden) if self.relu2 else gelu_tanh(hidden, self.native_gelu))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, config.native_layers)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, config.native_layers)
        self.mlp = MLP(config)
        self.resid_dropout = nn.Dropout(config.dropout)  # the reference's drop_shortcut, used twice

    def forward(self, x):  # (B, T, C)
        x = x + self.resid_dropout(self.attn(self.ln_1(x)))
        return x + self.resid_dropout(self.mlp(self.ln_2(x)))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        config.validate()
        self.config = config
        C, V = config.n_embd, config.padded_vocab_size
        self.wte = nn.Embedding(V, C)
        if not config.rotary:  # rotary: positions enter as rotations of q and k, no table
            self.wpe = nn.Embedding(config.context_length, C)
        self.drop = nn.Dropout(config.dropout)
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = LayerNorm(C, config.native_layers)
        self.lm_head = nn.Linear(C, V, bias=False)  # not tied to wte, as the reference
        if config.zero_init_proj:  # after the default initialisation, as the C++ model
            with torch.no_grad():
                for block in self.h:
                    for proj in (block.attn.c_proj, block.mlp.c_proj):
                        proj.weight.zero_()
                        proj.bias.zero_()
                if config.zero_init_head:
                    self.lm_head.weight.zero_()  # (padded_vocab, C)

    def forward(self, idx, targets=None):
        """idx (B, T) int64 -> logits (B, T, padded_vocab), and the loss when targets (B, T) are given. With
        logit_softcap and targets, the loss is the cap fused with the cross-entropy (SoftCappedCrossEntropy, as the
        C++ model's loss) and the logits None: the capped logits are the (B*T, V) work the fusion saves."""
        T = idx.size(1)
        if T > self.config.context_length:
            raise ValueError(f"sequence length {T} exceeds the model's context length {self.config.context_length}")
        if self.config.rotary:
            x = self.drop(self.wte(idx))  # (B, T, C)
        else:
            pos = torch.arange(T, dtype=torch.long, device=idx.device)  # (T)
            x = self.drop(self.wte(idx) + self.wpe(pos))  # (B, T, C)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (B, T, padded_vocab)
        if self.config.logit_softcap and targets is not None:
            return None, SoftCappedCrossEntropy.apply(logits.flatten(0, 1), targets.flatten(), self.config.softcap)
        if self.config.logit_softcap:
            logits = soft_cap(logits, self.config.softcap)
        return logits, (None if targets is None else cross_entropy(logits, targets))


def cross_entropy(logits, targets):
    """Mean over B*T positions; the softmax runs over all (padded) logits, as the reference and model::cross_entropy (model/gpt.cpp)."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())
