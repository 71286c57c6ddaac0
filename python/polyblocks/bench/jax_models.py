"""Flax (flax.linen) models for the JAX suite: ResNet-50, ViT-B/16 and a
diffusion UNet, built with random weights (no download).

Each factory takes the sizes (image size, batch, ``small`` for a variant
with fewer layers and channels, used by the tests) and returns
``(apply_fn, params, example_inputs)``: ``apply_fn(params, *example_inputs)``
runs the model in inference mode, with ``params`` (a pytree: Flax's
variables) an argument of the function, as Flax code passes it to
``jax.jit``.

- ResNet-50: the bottleneck ResNet of the Flax examples (NHWC, BatchNorm
  with ``use_running_average=True``), stages (3, 4, 6, 3) at 64 filters;
  small: stages (1, 1, 1, 1) at 16 filters. The running statistics are
  random (mean in [-0.1, 0.1], variance in [0.5, 1.5]) as in a trained
  model, and the last norm of each block starts at scale 1, not 0, so
  that the residual branches count.
- ViT-B/16: patch 16, 12 layers, width 768, 12 heads, MLP 3072, class
  token, learned position embedding, pre-LayerNorm blocks, GELU (Flax's
  default, tanh form); the classifier's weights are random, not zero;
  small: patch 8, 2 layers, width 64, 4 heads, MLP 128.
- UNet: a DDPM / latent-diffusion shaped UNet: sinusoidal timestep
  embedding and its MLP, levels of ResNet blocks (GroupNorm 32, SiLU,
  time embedding added), strided-convolution downsampling, self-attention
  blocks at the levels of resolution 16 and less, a middle block
  ResNet-attention-ResNet, an up path with skip concatenations and
  nearest-neighbour upsampling; channels (64, 128, 256, 512), two ResNet
  blocks per level, a 64x64x4 latent-like input; small: channels (32, 64),
  one block per level, GroupNorm 8, attention at the lowest level.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable, Sequence

__all__ = ["JAX_MODELS", "JaxModelCase", "build", "resnet50", "vit_b16", "unet",
           "output_arrays", "fp64_outputs", "matches"]


# ---------------------------------------------------------------------------
# ResNet-50
# ---------------------------------------------------------------------------

def _resnet_modules():
    import flax.linen as nn
    import jax.numpy as jnp

    class BottleneckResNetBlock(nn.Module):
        """The Flax examples' bottleneck block (1x1, 3x3, 1x1 and a
        projection shortcut when the shape changes)."""
        filters: int
        conv: Any
        norm: Any
        act: Callable
        strides: tuple = (1, 1)

        @nn.compact
        def __call__(self, x):
            residual = x
            y = self.conv(self.filters, (1, 1))(x)
            y = self.act(self.norm()(y))
            y = self.conv(self.filters, (3, 3), self.strides)(y)
            y = self.act(self.norm()(y))
            y = self.conv(self.filters * 4, (1, 1))(y)
            y = self.norm()(y)
            if residual.shape != y.shape:
                residual = self.conv(self.filters * 4, (1, 1), self.strides,
                                     name="conv_proj")(residual)
                residual = self.norm(name="norm_proj")(residual)
            return self.act(residual + y)

    class ResNet(nn.Module):
        """The Flax examples' ResNet (NHWC), in inference mode."""
        stage_sizes: Sequence[int]
        num_classes: int = 1000
        num_filters: int = 64

        @nn.compact
        def __call__(self, x):
            conv = functools.partial(nn.Conv, use_bias=False)
            norm = functools.partial(nn.BatchNorm, use_running_average=True, momentum=0.9,
                                     epsilon=1e-5)
            x = conv(self.num_filters, (7, 7), (2, 2), padding=[(3, 3), (3, 3)],
                     name="conv_init")(x)
            x = nn.relu(norm(name="bn_init")(x))
            x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
            for i, block_size in enumerate(self.stage_sizes):
                for j in range(block_size):
                    strides = (2, 2) if i > 0 and j == 0 else (1, 1)
                    x = BottleneckResNetBlock(self.num_filters * 2 ** i, strides=strides,
                                              conv=conv, norm=norm, act=nn.relu)(x)
            x = jnp.mean(x, axis=(1, 2))
            return nn.Dense(self.num_classes)(x)

    return ResNet


def _randomize_batch_stats(variables, key):
    """Running means in [-0.1, 0.1] and variances in [0.5, 1.5], as a
    trained network has (the initial 0 and 1 would make the norms an
    affine no-op)."""
    import jax

    stats = variables["batch_stats"]
    leaves, tree = jax.tree_util.tree_flatten_with_path(stats)
    keys = jax.random.split(key, len(leaves))
    new = []
    for (path, leaf), k in zip(leaves, keys):
        name = getattr(path[-1], "key", "")
        if name == "var":
            new.append(jax.random.uniform(k, leaf.shape, leaf.dtype, 0.5, 1.5))
        else:
            new.append(jax.random.uniform(k, leaf.shape, leaf.dtype, -0.1, 0.1))
    return {**variables, "batch_stats": jax.tree_util.tree_unflatten(tree, new)}


def resnet50(image_size: int = 224, batch: int = 1, small: bool = False, seed: int = 0):
    """ResNet-50 (NHWC input ``(batch, image_size, image_size, 3)``);
    ``small``: one block per stage at 16 filters, 10 classes."""
    import jax

    ResNet = _resnet_modules()
    if small:
        model = ResNet(stage_sizes=(1, 1, 1, 1), num_filters=16, num_classes=10)
    else:
        model = ResNet(stage_sizes=(3, 4, 6, 3))
    k_init, k_stats, k_x = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = jax.random.normal(k_x, (batch, image_size, image_size, 3))
    variables = model.init(k_init, x[:1])
    variables = _randomize_batch_stats(dict(variables), k_stats)

    def apply(params, x):
        return model.apply(params, x)

    return apply, variables, (x,)


# ---------------------------------------------------------------------------
# ViT-B/16
# ---------------------------------------------------------------------------

def _vit_modules():
    import flax.linen as nn
    import jax.numpy as jnp

    class MlpBlock(nn.Module):
        mlp_dim: int

        @nn.compact
        def __call__(self, x):
            y = nn.Dense(self.mlp_dim)(x)
            y = nn.gelu(y)
            return nn.Dense(x.shape[-1])(y)

    class EncoderBlock(nn.Module):
        mlp_dim: int
        num_heads: int

        @nn.compact
        def __call__(self, x):
            y = nn.LayerNorm()(x)
            y = nn.MultiHeadDotProductAttention(num_heads=self.num_heads,
                                                deterministic=True)(y, y)
            x = x + y
            y = nn.LayerNorm()(x)
            return x + MlpBlock(self.mlp_dim)(y)

    class ViT(nn.Module):
        """Vision Transformer as in google-research/vision_transformer."""
        patch: int
        hidden: int
        layers: int
        heads: int
        mlp_dim: int
        num_classes: int

        @nn.compact
        def __call__(self, x):
            x = nn.Conv(self.hidden, (self.patch, self.patch), strides=(self.patch, self.patch),
                        padding="VALID", name="embedding")(x)
            n, h, w, c = x.shape
            x = jnp.reshape(x, (n, h * w, c))
            cls = self.param("cls", nn.initializers.normal(0.02), (1, 1, c))
            x = jnp.concatenate([jnp.tile(cls, (n, 1, 1)), x], axis=1)
            pos = self.param("pos_embedding", nn.initializers.normal(0.02), (1, h * w + 1, c))
            x = x + pos
            for i in range(self.layers):
                x = EncoderBlock(self.mlp_dim, self.heads, name=f"encoderblock_{i}")(x)
            x = nn.LayerNorm(name="encoder_norm")(x)
            return nn.Dense(self.num_classes, name="head",
                            kernel_init=nn.initializers.normal(0.02))(x[:, 0])

    return ViT


def vit_b16(image_size: int = 224, batch: int = 1, small: bool = False, seed: int = 0):
    """ViT-B/16 (NHWC input ``(batch, image_size, image_size, 3)``);
    ``small``: patch 8, 2 layers, width 64, 4 heads, MLP 128, 10 classes."""
    import jax

    ViT = _vit_modules()
    if small:
        model = ViT(patch=8, hidden=64, layers=2, heads=4, mlp_dim=128, num_classes=10)
    else:
        model = ViT(patch=16, hidden=768, layers=12, heads=12, mlp_dim=3072, num_classes=1000)
    k_init, k_x = jax.random.split(jax.random.PRNGKey(seed))
    x = jax.random.normal(k_x, (batch, image_size, image_size, 3))
    variables = model.init(k_init, x[:1])

    def apply(params, x):
        return model.apply(params, x)

    return apply, variables, (x,)


# ---------------------------------------------------------------------------
# Diffusion UNet
# ---------------------------------------------------------------------------

def _unet_modules():
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    def timestep_embedding(t, dim: int):
        """Sinusoidal embedding of the timesteps ``t`` (batch,), as DDPM's."""
        half = dim // 2
        freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half, dtype=jnp.float32) / half)
        args = t.astype(jnp.float32)[:, None] * freqs[None, :]
        return jnp.concatenate([jnp.sin(args), jnp.cos(args)], axis=-1)

    class ResBlock(nn.Module):
        out_ch: int
        groups: int

        @nn.compact
        def __call__(self, x, temb):
            h = nn.silu(nn.GroupNorm(num_groups=self.groups)(x))
            h = nn.Conv(self.out_ch, (3, 3))(h)
            h = h + nn.Dense(self.out_ch)(nn.silu(temb))[:, None, None, :]
            h = nn.silu(nn.GroupNorm(num_groups=self.groups)(h))
            h = nn.Conv(self.out_ch, (3, 3))(h)
            if x.shape[-1] != self.out_ch:
                x = nn.Conv(self.out_ch, (1, 1), name="skip")(x)
            return x + h

    class AttnBlock(nn.Module):
        heads: int
        groups: int

        @nn.compact
        def __call__(self, x):
            n, hh, ww, c = x.shape
            h = nn.GroupNorm(num_groups=self.groups)(x).reshape(n, hh * ww, c)
            h = nn.MultiHeadDotProductAttention(num_heads=self.heads, deterministic=True)(h, h)
            return x + h.reshape(n, hh, ww, c)

    class UNet(nn.Module):
        channels: Sequence[int]
        blocks: int
        attn_levels: Sequence[int]
        groups: int
        heads: int
        out_ch: int

        @nn.compact
        def __call__(self, x, t):
            ch0 = self.channels[0]
            temb = timestep_embedding(t, ch0)
            temb = nn.Dense(4 * ch0)(temb)
            temb = nn.Dense(4 * ch0)(nn.silu(temb))
            h = nn.Conv(ch0, (3, 3), name="conv_in")(x)
            skips = [h]
            for level, ch in enumerate(self.channels):
                for _ in range(self.blocks):
                    h = ResBlock(ch, self.groups)(h, temb)
                    if level in self.attn_levels:
                        h = AttnBlock(self.heads, self.groups)(h)
                    skips.append(h)
                if level != len(self.channels) - 1:
                    h = nn.Conv(ch, (3, 3), strides=(2, 2))(h)
                    skips.append(h)
            ch = self.channels[-1]
            h = ResBlock(ch, self.groups)(h, temb)
            h = AttnBlock(self.heads, self.groups)(h)
            h = ResBlock(ch, self.groups)(h, temb)
            for level in reversed(range(len(self.channels))):
                ch = self.channels[level]
                for _ in range(self.blocks + 1):
                    h = jnp.concatenate([h, skips.pop()], axis=-1)
                    h = ResBlock(ch, self.groups)(h, temb)
                    if level in self.attn_levels:
                        h = AttnBlock(self.heads, self.groups)(h)
                if level != 0:
                    n, hh, ww, c = h.shape
                    h = jax.image.resize(h, (n, 2 * hh, 2 * ww, c), "nearest")
                    h = nn.Conv(ch, (3, 3))(h)
            h = nn.silu(nn.GroupNorm(num_groups=self.groups)(h))
            return nn.Conv(self.out_ch, (3, 3), name="conv_out")(h)

    return UNet


def unet(image_size: int = 64, batch: int = 1, small: bool = False, seed: int = 0,
         in_channels: int = 4):
    """The diffusion UNet on ``(batch, image_size, image_size, in_channels)``
    and timesteps ``(batch,)``; attention at the levels of resolution
    16 and less (at least the lowest level); ``small``: channels (32, 64),
    one block per level, GroupNorm 8."""
    import jax
    import jax.numpy as jnp

    UNet = _unet_modules()
    if small:
        channels, blocks, groups, heads = (32, 64), 1, 8, 2
    else:
        channels, blocks, groups, heads = (64, 128, 256, 512), 2, 32, 8
    levels = len(channels)
    attn = tuple(i for i in range(levels) if image_size >> i <= 16) or (levels - 1,)
    model = UNet(channels=channels, blocks=blocks, attn_levels=attn, groups=groups,
                 heads=heads, out_ch=in_channels)
    k_init, k_x, k_t = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = jax.random.normal(k_x, (batch, image_size, image_size, in_channels))
    t = jax.random.randint(k_t, (batch,), 0, 1000).astype(jnp.float32)
    variables = model.init(k_init, x[:1], t[:1])
    # Flax initializes the convolutions' biases to zero and the GroupNorms
    # to the identity; random biases and affine parameters, as a trained
    # model has, make every term count.
    leaves, tree = jax.tree_util.tree_flatten_with_path(variables)
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), len(leaves))
    new = []
    for (path, leaf), k in zip(leaves, keys):
        name = getattr(path[-1], "key", "")
        if name in ("bias", "scale"):
            base = 1.0 if name == "scale" else 0.0
            leaf = base + 0.1 * jax.random.normal(k, leaf.shape, leaf.dtype)
        new.append(leaf)
    variables = jax.tree_util.tree_unflatten(tree, new)

    def apply(params, x, t):
        return model.apply(params, x, t)

    return apply, variables, (x, t)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class JaxModelCase:
    name: str
    make: Callable
    image_size: int
    describe: str


JAX_MODELS: dict[str, JaxModelCase] = {c.name: c for c in [
    JaxModelCase("resnet50", resnet50, 224, "Flax ResNet-50 (examples' bottleneck), 224x224"),
    JaxModelCase("vit_b16", vit_b16, 224, "Flax ViT-B/16, 224x224"),
    JaxModelCase("unet", unet, 64, "Flax diffusion UNet (64,128,256,512), 64x64x4 + timestep"),
]}


def build(name: str, batch: int = 1, small: bool = False, image_size: int | None = None,
          seed: int = 0):
    """``(apply_fn, params, example_inputs)`` of the model ``name``, at its
    full image size unless ``image_size`` is given."""
    if name not in JAX_MODELS:
        raise ValueError(f"unknown model {name!r}; known: {sorted(JAX_MODELS)}")
    case = JAX_MODELS[name]
    size = case.image_size if image_size is None else image_size
    return case.make(image_size=size, batch=batch, small=small, seed=seed)


# ---------------------------------------------------------------------------
# Outputs and accuracy
# ---------------------------------------------------------------------------

def output_arrays(out) -> list:
    """A model's outputs as a flat list of numpy arrays."""
    import jax
    import numpy as np
    return [np.array(leaf) for leaf in jax.tree_util.tree_leaves(out)]


def fp64_outputs(apply_fn, params, inputs) -> list:
    """The outputs of ``apply_fn`` computed in float64 by XLA (``jax_enable_x64``
    for the call; float parameters and inputs cast), as numpy arrays."""
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        def up(a):
            a = jnp.asarray(a)
            return a.astype(jnp.float64) if jnp.issubdtype(a.dtype, jnp.floating) else a
        params64 = jax.tree_util.tree_map(up, params)
        inputs64 = tuple(up(a) for a in inputs)
        return output_arrays(jax.jit(apply_fn)(params64, *inputs64))


def matches(ref: list, res: list, fp64: list, tol: float = 1e-3) -> bool:
    """The accuracy rule of the torch model tests and suite (PyTorch's dynamo
    benchmark harness, ``torch._dynamo.utils.same``): allclose at ``tol``,
    else an RMSE against the float64 reference no worse than about the
    baseline's."""
    import torch
    from torch._dynamo.utils import same

    if len(ref) != len(res):
        return False
    for r, o, f in zip(ref, res, fp64):
        if r.shape != o.shape or r.dtype != o.dtype:
            return False
        if not same(torch.from_numpy(r), torch.from_numpy(o), fp64_ref=torch.from_numpy(f),
                    tol=tol):
            return False
    return True
