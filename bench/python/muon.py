"""The muon flag's optimizer, as bench/optim/muon.cpp: Muon (Nesterov momentum, five Newton-Schulz iterations batched
by shape, one record's shape scale) for the 2-D weights inside the blocks, torch.optim.AdamW for every other
parameter, in the groups and at the rates the records paired it with (the embeddings, the head, the rest). The same
ops in the same order as the C++ side, so the Python rows train the same function.

What it takes from torch.optim.Muon (the pinned torch's, tests/python/torch_muon_cases.py writes what it computes):
the Newton-Schulz quintic's coefficients, its number of steps and its eps, read from torch.optim.Muon's signature;
they are the records' (bench/optim/muon.h types the same numbers, tests/bench/optim/muon_test.cpp holds them to
torch's). The step itself stays here, because torch.optim.Muon's step is not the C++ step's function to the bit, and
the Python rows are held to the C++ losses to the bit (tests/bench/speedrun_python_rows_test.cpp):
- its momentum is the EMA form (buf.lerp_(g, 1 - mu), then g.lerp(buf, mu)), (1 - mu) times the records' sum form
  the C++ runs (buf = mu buf + g, u = g + mu buf): the same direction, which Newton-Schulz normalises, but its bf16
  cast rounds another number unless 1 - mu is a power of two (at mu = 0.95, 2e-2 of the update apart);
- it runs Newton-Schulz in bf16 only; the C++ runs fp32 too (auto picks it where a CPU emulates bf16);
- one matrix at a time (its foreach refuses), where the C++ stacks each shape group into one bmm chain;
- a parameter is one matrix to it: the fused c_attn's three row blocks, orthogonalised separately and at their own
  shape's rate here, would have to be parameters of their own;
- of the shape rules only sqrt_out_over_in is one of its adjust_lr_fn ("original"); sqrt_max_dim is its
  "match_rms_adamw" at 5 x the rate; none has no spelling;
- it clamps the norm at eps where the records add eps, and transposes a tall matrix before normalising, not after:
  the same numbers here (measured equal to the bit in bf16);
- its weight decay (default 0.1) multiplies every matrix by 1 - lr wd even at 0; the records' Muon has none.
Where the two can compute the same numbers, they do: at mu = 0.75 (1 - mu = 1/4) torch.optim.Muon's steps and this
Muon's (and so the C++ Muon's) agree to the bit on an AVX-512 or AVX2 CPU (tests/python/test_torch_muon_cases.py).
"""

import inspect
import math

import torch

# The Newton-Schulz quintic X <- a X + (b A + c A^2) X, A = X X^T, NS_STEPS times: torch.optim.Muon's defaults, the
# records' coefficients (bench/optim/muon.h's kNsA, kNsB, kNsC, kNsSteps). NS_EPS is added to ||u||_F before
# normalising, so a zero gradient gives a zero update (kNsEps; torch.optim.Muon clamps the norm at it instead).
_TORCH_MUON = inspect.signature(torch.optim.Muon).parameters
NS_A, NS_B, NS_C = _TORCH_MUON["ns_coefficients"].default
NS_STEPS = _TORCH_MUON["ns_steps"].default
NS_EPS = _TORCH_MUON["eps"].default
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


class NsBuffers:
    """bench/optim/muon.h's NsBuffers: what Newton-Schulz iterates a stack of k (r x n) matrices in, r <= n, kept by
    Muon per shape group from step to step (a fresh tensor per GEMM is freshly mapped and faulted in on a CPU)."""

    def __init__(self):
        self.X = self.next = self.A = self.B = None
        self.staged = None  # (k, r, n) float32 where fit is asked for a float stage (Muon.step says why)

    def fit(self, k, r, n, dtype, device, float_stage=False):
        if (
            self.X is not None
            and self.X.shape == (k, r, n)
            and self.X.dtype == dtype
            and (self.staged is not None) == float_stage
        ):
            return
        self.X, self.next = (torch.empty(k, r, n, dtype=dtype, device=device) for _ in range(2))  # the iterates
        self.A, self.B = (torch.empty(k, r, r, dtype=dtype, device=device) for _ in range(2))  # X X^T, b A + c A^2
        self.staged = torch.empty(k, r, n, dtype=torch.float32, device=device) if float_stage else None


def newton_schulz5_in(buffers):
    """NS5 of each matrix of the stack in buffers.X (k, r, n), r <= n, in place, each normalised by its own norm:
    newton_schulz5's ops with bmm and baddbmm into the buffers, as bench/optim/muon.cpp's; the result in buffers.X."""
    X = buffers.X
    X.div_(torch.linalg.vector_norm(X, 2, (1, 2), True) + NS_EPS)  # (k, 1, 1): each by its own norm
    for _ in range(NS_STEPS):
        torch.bmm(X, X.transpose(1, 2), out=buffers.A)  # A = X X^T, (k, r, r)
        torch.baddbmm(buffers.A, buffers.A, buffers.A, beta=NS_B, alpha=NS_C, out=buffers.B)  # b A + c A^2
        torch.baddbmm(X, buffers.B, X, beta=NS_A, alpha=1.0, out=buffers.next)  # a X + B X
        buffers.X, buffers.next = buffers.next, buffers.X
        X = buffers.X


def newton_schulz5_batched(G, dtype):
    """NS5 of each matrix of a stack G (k, rows, cols) of one shape: G cast to dtype (transposed when it has more
    rows than columns) into buffers of its own, then newton_schulz5_in; in dtype, G's shape."""
    tall = G.size(1) > G.size(2)
    wide = G.transpose(1, 2) if tall else G  # (k, r, n), r = min(rows, cols)
    buffers = NsBuffers()
    buffers.fit(*wide.shape, dtype, G.device)
    buffers.X.copy_(wide)
    newton_schulz5_in(buffers)
    return buffers.X.transpose(1, 2) if tall else buffers.X


def shape_groups(matrices, scale):
    """The blocks Newton-Schulz sees (each matrix, or a fused c_attn's row blocks) grouped by their shape once the tall
    ones are transposed, in the order each group's first block appears, and within a group split by the rate's shape
    scale: [(blocks, [(scale, [block indices])])], each block (matrix index, first row, rows, tall), as
    bench/optim/muon.cpp's Muon::shape_groups."""
    groups, shapes = [], []
    for i, (p, blocks) in enumerate(matrices):
        rows, cols = p.size(0) // blocks, p.size(1)
        shape = (min(rows, cols), max(rows, cols))
        for b in range(blocks):
            if shape not in shapes:
                shapes.append(shape)
                groups.append(([], []))
            members, by_scale = groups[shapes.index(shape)]
            s = scale(rows, cols)
            slot = next((entry for entry in by_scale if entry[0] == s), None)
            if slot is None:
                slot = (s, [])
                by_scale.append(slot)
            slot[1].append(len(members))
            members.append((i, b * rows, rows, rows > cols))
    return groups


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
        self.dtype = NS_DTYPES[options["ns_dtype"]]
        self.params = [p for p, _ in matrices]
        self.groups = shape_groups(matrices, SCALES[options["scale"]])
        self.ns_buffers = [NsBuffers() for _ in self.groups]  # one per group, filled at the first step
        self.buffers = None

    @torch.no_grad()
    def step(self):
        """Muon::step: the momentum in one pass per matrix, Nesterov's g + mu buf written straight into each shape
        group's stack (k, r, n) in the Newton-Schulz dtype (on a CPU in bf16, through a float stack cast once each
        way), orthogonalised together, and each scale's update as one foreach add; then the Adam groups."""
        if self.buffers is None:
            self.buffers = [torch.zeros_like(p) for p in self.params]
        grads = [p.grad for p in self.params]
        mu = self.momentum
        for buf, grad in zip(self.buffers, grads):
            torch.add(grad, buf, alpha=mu, out=buf)  # buf <- g + mu buf: one pass, where mul_ then add_ made two
        for (members, by_scale), buffers in zip(self.groups, self.ns_buffers):
            i, _, rows, _ = members[0]
            cols, device = self.params[i].size(1), self.params[i].device
            # On a CPU in bf16, through the group's float stack, cast once (the same bits): ATen's CPU kernels cast
            # between dtypes through a fresh float tensor per call, page-faulted every step at the MLP's blocks' size.
            float_stage = self.dtype != torch.float32 and device.type == "cpu"
            buffers.fit(len(members), min(rows, cols), max(rows, cols), self.dtype, device, float_stage)
            into = buffers.X if buffers.staged is None else buffers.staged
            for k, (i, row, rows, tall) in enumerate(members):  # Nesterov's g + mu buf, cast as it is written
                slot = into[k]
                torch.add(
                    grads[i].narrow(0, row, rows),
                    self.buffers[i].narrow(0, row, rows),
                    alpha=mu,
                    out=slot.t() if tall else slot,
                )
            if buffers.staged is not None:
                buffers.X.copy_(buffers.staged)  # one cast of the whole stack
            newton_schulz5_in(buffers)
            O = buffers.X  # (k, r, n)
            if buffers.staged is not None:
                O = buffers.staged.copy_(O)  # back to float once, for the update's float adds
            for scale, indices in by_scale:
                targets, updates = [], []
                for k in indices:
                    i, row, rows, tall = members[k]
                    targets.append(self.params[i].narrow(0, row, rows))
                    updates.append(O[k].t() if tall else O[k])
                torch._foreach_add_(targets, updates, alpha=-self.lr * scale)  # W <- W - lr_eff O
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
