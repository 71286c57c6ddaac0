"""The model suite shared by the tests, the benchmark and the demo.

Every model is built with random weights (no download): torchvision CNNs and
ViT, and transformer stacks from `transformers` configurations (BERT-base
encoder, GPT-2 small decoder with its causal mask). `build(name)` returns the
model in eval mode and its example inputs.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch

__all__ = ["MODELS", "ModelCase", "build", "output_tensors"]


@dataclasses.dataclass(frozen=True)
class ModelCase:
    name: str
    family: str
    make: Callable[[int, dict], tuple[torch.nn.Module, tuple]]
    describe: str


def _torchvision(arch: str):
    def make(batch: int, kw: dict):
        import torchvision
        size = kw.get("image_size", 224)
        extra = {"image_size": size} if arch.startswith("vit") else {}
        model = getattr(torchvision.models, arch)(weights=None, **extra)
        if arch.startswith("vit"):
            # torchvision initializes ViT's classifier to zeros: the output
            # would not depend on anything else.
            with torch.no_grad():
                for p in model.heads.parameters():
                    p.normal_(0.0, 0.02)
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                # Non-trivial running statistics, as in a trained model.
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        return model, (torch.randn(batch, 3, size, size),)
    return make


def _bert(batch: int, kw: dict):
    from transformers import BertConfig, BertModel
    config = BertConfig(num_hidden_layers=kw.get("layers", 12))
    model = BertModel(config)
    seq = kw.get("seq_len", 128)
    return model, (torch.randint(0, config.vocab_size, (batch, seq)),)


def _gpt2(batch: int, kw: dict):
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(n_layer=kw.get("layers", 12), use_cache=False)
    model = GPT2Model(config)
    seq = kw.get("seq_len", 128)
    return model, (torch.randint(0, config.vocab_size, (batch, seq)),)


class _SDPA(torch.nn.Module):
    """Causal self-attention through F.scaled_dot_product_attention."""

    def __init__(self, dim: int = 256, heads: int = 8):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def _sdpa(batch: int, kw: dict):
    return _SDPA(), (torch.randn(batch, kw.get("seq_len", 128), 256),)


MODELS: dict[str, ModelCase] = {c.name: c for c in [
    ModelCase("resnet18", "cnn", _torchvision("resnet18"), "torchvision resnet18, 224x224"),
    ModelCase("resnet50", "cnn", _torchvision("resnet50"), "torchvision resnet50, 224x224"),
    ModelCase("mobilenet_v2", "cnn", _torchvision("mobilenet_v2"), "torchvision mobilenet_v2"),
    ModelCase("mobilenet_v3_large", "cnn", _torchvision("mobilenet_v3_large"),
              "torchvision mobilenet_v3_large"),
    ModelCase("efficientnet_b0", "cnn", _torchvision("efficientnet_b0"),
              "torchvision efficientnet_b0"),
    ModelCase("densenet121", "cnn", _torchvision("densenet121"), "torchvision densenet121"),
    ModelCase("vit_b_16", "transformer", _torchvision("vit_b_16"), "torchvision vit_b_16"),
    ModelCase("bert_base", "transformer", _bert,
              "BERT-base encoder (transformers BertModel, random weights), seq 128"),
    ModelCase("gpt2_small", "transformer", _gpt2,
              "GPT-2 small decoder (transformers GPT2Model, causal), seq 128"),
    ModelCase("sdpa_block", "transformer", _sdpa,
              "causal self-attention through F.scaled_dot_product_attention"),
]}


def build(name: str, batch: int = 1, seed: int = 0, **kw) -> tuple[torch.nn.Module, tuple]:
    """The model `name` in eval mode with random weights, and its inputs:
    a suite model, or any torchvision classification model as
    torchvision:ARCH (as the sweep names them). Keywords: image_size (CNNs,
    ViT), layers and seq_len (transformers)."""
    if name.startswith("torchvision:"):
        make = _torchvision(name.partition(":")[2])
    elif name in MODELS:
        make = MODELS[name].make
    else:
        raise ValueError(f"unknown model {name!r}; known: {sorted(MODELS)} "
                         "and torchvision:ARCH")
    torch.manual_seed(seed)
    model, inputs = make(batch, kw)
    return model.eval(), inputs


def output_tensors(out) -> list[torch.Tensor]:
    """A model's outputs as a flat list of tensors (transformers' ModelOutput
    included)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    if isinstance(out, dict):
        out = list(out.values())
    tensors = []
    for o in out:
        if isinstance(o, torch.Tensor):
            tensors.append(o)
        elif isinstance(o, (tuple, list, dict)) or hasattr(o, "to_tuple"):
            tensors.extend(output_tensors(o))
    return tensors
