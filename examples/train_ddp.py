"""Data-parallel training with DistributedDataParallel around a model
compiled by PolyBlocks, on the gloo backend (CPU).

    torchrun --standalone --nproc-per-node=2 examples/train_ddp.py \
        [--model small_cnn|resnet18|bert|tiny_bert] [--steps 5] [--check]

Each process trains its replica on its own shard of the data; DDP averages
the gradients across processes after each backward (gloo all-reduce), and
dynamo's DDP optimizer splits the compiled graph at DDP's bucket
boundaries so that the all-reduce of one bucket overlaps the backward of
the next: every piece is a graph that PolyBlocks compiles. The optimizer
step (AdamW, or SGD with momentum) is compiled too.

With --check, the same training runs again in eager DDP from the same
initial weights, and the largest difference between the two runs'
parameters is printed; the exit status is 1 when it exceeds --tolerance.

On GPU machines the same code runs with the NCCL backend and CUDA tensors
(`--backend nccl`, one GPU per process): what PolyBlocks compiles then is
each piece for the process's GPU.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def build(name: str):
    """The model and a function making rank `r`'s batch for step `i`."""
    torch.manual_seed(0)  # the same initial weights on every process
    if name == "small_cnn":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 1024),
            torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, 10))  # 4.3 MB of parameters: several 1 MB buckets

        def batch(rank, step):
            g = torch.Generator().manual_seed(1000 * rank + step)
            return (torch.randn(4, 3, 16, 16, generator=g),
                    torch.randint(0, 10, (4,), generator=g))
        return model, batch, lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y)
    if name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(weights=None, num_classes=10)

        def batch(rank, step):
            g = torch.Generator().manual_seed(1000 * rank + step)
            return (torch.randn(8, 3, 64, 64, generator=g),
                    torch.randint(0, 10, (8,), generator=g))
        return model, batch, lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y)
    if name in ("bert", "tiny_bert"):
        import transformers
        size = {} if name == "bert" else dict(  # 2.8 MB of parameters
            vocab_size=4000, hidden_size=128, num_attention_heads=2, intermediate_size=256,
            max_position_embeddings=64)
        config = transformers.BertConfig(num_hidden_layers=2, hidden_dropout_prob=0.0,
                                         attention_probs_dropout_prob=0.0, **size)
        model = transformers.BertForMaskedLM(config)

        def batch(rank, step):
            g = torch.Generator().manual_seed(1000 * rank + step)
            ids = torch.randint(0, config.vocab_size, (4, 32), generator=g)
            return ids, ids
        return model, batch, lambda m, x, y: m(input_ids=x, labels=y).loss
    raise SystemExit(f"unknown model {name!r}: small_cnn, resnet18, bert or tiny_bert")


def train(model, batch, loss_fn, steps: int, compiled: bool, backend: str,
          device: torch.device, bucket_cap_mb: float | None = None,
          optimizer: str = "adamw") -> list[float]:
    rank = dist.get_rank()
    model = model.to(device)
    extra = {"bucket_cap_mb": bucket_cap_mb} if bucket_cap_mb else {}
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None, **extra)
    if optimizer == "sgd":
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-2, momentum=0.9)
    else:
        opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    forward, update = ddp, opt.step
    if compiled:
        import polyblocks  # noqa: F401  (registers the backend)
        forward = torch.compile(ddp, backend=backend)
        update = torch.compile(opt.step, backend=backend)
    losses = []
    for step in range(steps):
        x, y = (t.to(device) for t in batch(rank, step))
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(forward, x, y)
        loss.backward()
        update()
        losses.append(float(loss.detach()))
    return losses


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--backend", default="gloo", help="torch.distributed backend")
    p.add_argument("--check", action="store_true",
                   help="compare the parameters with eager DDP's")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw",
                   help="AdamW (lr 1e-3) or SGD with momentum (lr 1e-2); AdamW divides "
                   "each gradient by its running RMS, so that a parameter whose gradient "
                   "is zero but for rounding (a bias before a norm) moves by up to lr "
                   "per step in either run: --check compares the arithmetic best with SGD")
    p.add_argument("--bucket-cap-mb", type=float, default=None,
                   help="DDP's gradient bucket size (small: more buckets, more graph pieces)")
    args = p.parse_args(argv)

    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        # The processes share the machine's cores.
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    model, batch, loss_fn = build(args.model)
    reference = copy.deepcopy(model) if args.check else None
    losses = train(model, batch, loss_fn, args.steps, True, "polyblocks", device,
                   args.bucket_cap_mb, args.optimizer)
    status = 0
    if rank == 0:
        print(f"{args.model}: {world} processes, {args.steps} steps, losses "
              + ", ".join(f"{v:.4f}" for v in losses))
    if reference is not None:
        eager = train(reference, batch, loss_fn, args.steps, False, "", device,
                      args.bucket_cap_mb, args.optimizer)
        diff = max((a.detach() - b.detach()).abs().max().item()
                   for a, b in zip(model.parameters(), reference.parameters()))
        if rank == 0:
            print("eager DDP losses " + ", ".join(f"{v:.4f}" for v in eager))
            print(f"max parameter difference against eager DDP: {diff:.3e} "
                  f"(tolerance {args.tolerance:g})")
        status = 0 if diff <= args.tolerance else 1
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
