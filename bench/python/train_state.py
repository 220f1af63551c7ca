"""What a run trains and with what: the model built in the request's layout with the C++ side's initial weights, on
its device and precision, compiled or not; the AdamW the request names (with Muon for the blocks' matrices when the
request has muon); and which attention kernel the flash layout
dispatches to. The Python counterpart of bench/step/train_state.cpp: the measure loop and training to a target both
start from here.
"""

from pathlib import Path

import torch
from failure import StepFailure
from muon import Muon, muon_groups
from request import IMPLEMENTATIONS, OPTIMIZERS
from timers import make_timer
from torch.nn.attention import SDPBackend

from model import GPT, GPTConfig, sdpa_pin


def load_weights(model, path):
    """Copies every parameter from the file by name; names and shapes must match exactly, else nothing loads."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    params = dict(model.named_parameters())
    problems = [f"missing {n}" for n in params if n not in tensors]
    problems += [f"unexpected {n}" for n in tensors if n not in params]
    problems += [
        f"shape of {n}: file {list(tensors[n].shape)}, model {list(p.shape)}"
        for n, p in params.items()
        if n in tensors and tensors[n].shape != p.shape
    ]
    if problems:
        raise StepFailure(f"{path.name} does not match the model's parameters: " + "; ".join(problems))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(tensors[name])


def set_precision(tf32, device):
    """TF32 for CUDA float32 matmuls and convolutions, or IEEE (set explicitly either way, as the C++ Tf32Guard).
    CUDA only, as in C++: set_float32_matmul_precision would also switch oneDNN's CPU matmuls."""
    if device.type != "cuda":
        return
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def make_optimizer(model, request):
    """The request's optimizer and the AdamW implementation torch.optim runs: AdamW over every parameter, or with
    muon (bench/step/train_state.cpp's make_optimizer) Muon over the blocks' matrices and the Adam the records paired
    it with over the rest: one torch.optim.AdamW whose groups are bench/optim/muon.cpp's make_muon's (the embeddings,
    the head, the others; each at its own rate, with Muon's betas and weight decay)."""
    a, muon = request["adamw"], request["muon"]
    if muon:
        matrices, embeddings, head, others = muon_groups(model.named_parameters())
        betas, decay = (muon["adam_beta1"], muon["adam_beta2"]), muon["adam_weight_decay"]
        groups = [
            {"params": params, "lr": lr, "base_lr": lr, "betas": betas, "weight_decay": decay}
            for params, lr in ((embeddings, muon["embed_lr"]), (head, muon["head_lr"]), (others, a["lr"]))
            if params
        ]
    else:
        groups = list(model.parameters())
    optimizer = torch.optim.AdamW(
        groups,
        lr=a["lr"],
        betas=(a["beta1"], a["beta2"]),
        eps=a["eps"],
        weight_decay=a["weight_decay"],
        **OPTIMIZERS[request["optimizer"]],
    )
    # What torch.optim will run: fused, else foreach, else its single-tensor loop.
    ran = "fused" if optimizer.defaults["fused"] else "foreach" if optimizer.defaults["foreach"] else "forloop"
    if muon:
        optimizer = Muon(matrices, optimizer, muon, a["lr"])
    return optimizer, ran


SDPA_NAMES = {
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.MATH: "math",
}


def sdpa_backend_used(config, batch_size, seq_len, dtype, device):
    """The kernel scaled_dot_product_attention dispatches to for the flash layout's real q/k/v (shape, strides,
    dtype, requires_grad, training dropout) under the pin; None for the reference layout. On CPU a training
    dropout > 0 rules the flash kernel out, so it is "math" there."""
    if not config.flash:
        return None
    B, T, C, H = batch_size, seq_len, config.n_embd, config.n_head
    qkv = torch.empty(B, T, 3, H, C // H, dtype=dtype, device=device, requires_grad=True)
    q, k, v = qkv.permute(2, 0, 3, 1, 4)  # (B, H, T, D) views, strided as the model's
    try:
        with sdpa_pin(config.sdpa_backend):
            choice_ = torch._fused_sdp_choice(q, k, v, None, config.dropout, True)
    except RuntimeError as e:  # the pinned kernel cannot run these inputs (SDPA would raise the same in the step)
        raise StepFailure(
            f"scaled_dot_product_attention pinned to {config.sdpa_backend} on {device.type} "
            f"{str(dtype).removeprefix('torch.')} with dropout {config.dropout}: "
            f"{str(e).splitlines()[0]}"
        ) from e
    backend = SDPBackend(choice_)
    return SDPA_NAMES.get(backend, backend.name.lower())


def prepare(request, request_dir, result):
    """The model on its device with the request's weights, in training mode, the dropout seed set; the forward the
    step calls (compiled or not), and the step's timer."""
    device = torch.device(request["device"])
    if device.type == "cuda":
        torch.cuda.set_device(device)
    set_precision(request["tf32"], device)
    config = GPTConfig(**request["model"])
    model = GPT(config)
    load_weights(model, Path(request_dir) / "weights.safetensors")
    model.to(device)
    if request["bf16"] and request["bf16_mode"] == "pure":
        model.to(torch.bfloat16)
    dtype = torch.bfloat16 if request["bf16"] else torch.float32  # autocast runs attention in bf16 too
    result["sdpa_backend_used"] = sdpa_backend_used(config, request["batch_size"], request["seq_len"], dtype, device)
    # Dropout draws from here on, in the C++ model's order, as the C++ run after its own reseed.
    torch.manual_seed(request["dropout_seed"])
    model.train()
    mode = IMPLEMENTATIONS[request["implementation"]]
    forward = model if mode is None else torch.compile(model, mode=mode)  # the model, not the optimizer
    timer = make_timer(device)
    result["clock"] = timer.clock
    return device, model, forward, timer
