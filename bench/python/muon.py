"""The muon flag's optimizer, as bench/optim/muon.cpp: Muon (Nesterov momentum, five Newton-Schulz iterations, one
record's shape scale) for the 2-D weights inside the blocks, torch.optim.AdamW for every other parameter, in the
groups and at the rates the records paired it with (the embeddings, the head, the rest). The same ops
in the same order as the C++ side, so the Python rows train the same function.
"""

import math

import torch

# The Newton-Schulz quintic X <- a X + (b A + c A^2) X, A = X X^T: bench/optim/muon.h's kNsA, kNsB, kNsC.
NS_A, NS_B, NS_C = 3.4445, -4.7750, 2.0315
NS_STEPS = 5
NS_EPS = 1e-7  # added to ||u||_F before normalising, so a zero gradient gives a zero update
# scale rule -> scale(out, in) of lr_eff = lr * scale: records #3, #4-#7, #8 on (bench/optim/muon.h's MuonScale)
SCALES = {
    "none": lambda out, inp: 1.0,
    "sqrt_max_dim": lambda out, inp: math.sqrt(max(out, inp)),
    "sqrt_out_over_in": lambda out, inp: math.sqrt(max(1.0, out / inp)),
}
NS_DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def newton_schulz5(G, dtype):
    """NS5(G): G cast to dtype, normalised by its Frobenius norm + NS_EPS, transposed when it has more rows than
    columns, five quintic iterations, transposed back; in dtype, G's shape."""
    X = G.to(dtype)
    X = X / (torch.linalg.vector_norm(X) + NS_EPS)
    tall = G.size(0) > G.size(1)
    if tall:
        X = X.t()  # (r, n), r = min(rows, cols)
    for _ in range(NS_STEPS):
        A = torch.mm(X, X.t())  # (r, r)
        B = torch.addmm(A, A, A, beta=NS_B, alpha=NS_C)  # b A + c A^2
        X = torch.addmm(X, B, X, beta=NS_A, alpha=1.0)  # a X + B X
    return X.t() if tall else X


def muon_groups(named_parameters):
    """(matrices, embeddings, head, others): every 2-D parameter inside the blocks ("h.N....") with its row blocks (3
    for the fused c_attn); the token and position tables; the head; the rest in order, as bench/optim/muon.cpp's
    muon_groups."""
    matrices, embeddings, head, others = [], [], [], []
    for name, p in named_parameters:
        if name.startswith("h.") and p.dim() == 2:
            matrices.append((p, 3 if name.endswith(".attn.c_attn.weight") else 1))
        elif name in ("wte.weight", "wpe.weight"):
            embeddings.append(p)
        elif name == "lm_head.weight":
            head.append(p)
        else:
            others.append(p)
    return matrices, embeddings, head, others


class Muon:
    """bench/optim/muon.h's Muon: step, zero_grad and set_lr over the matrices, delegating the rest to `adamw` (one
    torch.optim.AdamW whose param groups are make_muon's Adam groups)."""

    def __init__(self, matrices, adamw, options, adamw_lr):
        self.matrices, self.adamw, self.adamw_lr = matrices, adamw, adamw_lr
        self.base_lr, self.lr, self.momentum = options["lr"], options["lr"], options["momentum"]
        self.scale, self.dtype = SCALES[options["scale"]], NS_DTYPES[options["ns_dtype"]]
        self.buffers = None

    @torch.no_grad()
    def step(self):
        if self.buffers is None:
            self.buffers = [torch.zeros_like(p) for p, _ in self.matrices]
        mu = self.momentum
        for (p, blocks), buf in zip(self.matrices, self.buffers):
            g = p.grad
            buf.mul_(mu).add_(g)
            u = g.add(buf, alpha=mu)  # Nesterov: g + mu buf
            rows, cols = p.size(0) // blocks, p.size(1)
            lr_eff = self.lr * self.scale(rows, cols)
            for b in range(blocks):
                p.narrow(0, b * rows, rows).add_(newton_schulz5(u.narrow(0, b * rows, rows), self.dtype), alpha=-lr_eff)
        self.adamw.step()

    def zero_grad(self, set_to_none=True):
        for p, _ in self.matrices:
            p.grad = None
        self.adamw.zero_grad(set_to_none=set_to_none)

    def set_lr(self, lr):
        """The schedule's factor (lr / the run's base rate) times each group's base rate: the Muon group's and each
        Adam group's (its "base_lr")."""
        factor = lr / self.adamw_lr if self.adamw_lr > 0 else 1.0
        for group in self.adamw.param_groups:
            group["lr"] = group["base_lr"] * factor
        self.lr = self.base_lr * factor
