"""Whole models compiled for NVIDIA chips through torch.compile, run on the
CPU in the kernel emulator (the backend's ``emulate`` option) and checked
by test_models' accuracy rule against eager on the CPU.

Shapes are small for the emulator (every GPU thread is interpreted):
resnet18 on 32x32 images, a 2-layer BERT on 16 tokens. f32 runs without
tf32 (the rule is eager's f32 accuracy); the tf32 runs put BERT's linear
layers on the tensor cores (mma.sync on sm80, wgmma on sm90) and are held
to tf32's precision instead; with codegen=tile-ir those layers are Tile IR
kernels, run by the tile interpreter.
"""

import copy

import pytest
import torch
from torch._dynamo.utils import same

from polyblocks import compiler
from polyblocks.bench import models

from helpers import compile_strict, matrix_unit_families

TARGETS = ["nvidia-sm80", "nvidia-sm90"]
MODELS = {
    "resnet18": {"image_size": 32},
    "bert_base": {"layers": 2, "seq_len": 16},
}


def _run(name, target, **options):
    model, inputs = models.build(name, batch=1, **MODELS[name])
    with torch.no_grad():
        ref = models.output_tensors(model(*inputs))
        compiled = compile_strict(model, target=target, emulate=True, **options)
        res = models.output_tensors(compiled(*inputs))
        model64 = copy.deepcopy(model).double()
        inputs64 = tuple(x.double() if x.is_floating_point() else x for x in inputs)
        fp64 = models.output_tensors(model64(*inputs64))
    assert len(res) == len(ref) > 0
    for r, o in zip(ref, res):
        assert r.abs().max() > 0, "a model output that is all zeros tests nothing"
        assert o.shape == r.shape and o.dtype == r.dtype and o.device.type == "cpu"
    return ref, res, fp64


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(MODELS))
def test_model_emulated_matches_eager(name, target):
    ref, res, fp64 = _run(name, target, allow_tf32=False)
    for i, (r, o, f) in enumerate(zip(ref, res, fp64)):
        assert same(r, o, fp64_ref=f, tol=1e-3), (
            f"{name} on {target}, output {i}: max abs error "
            f"{(o - r).abs().max().item():.3e}")


@pytest.mark.parametrize("target", TARGETS)
def test_bert_tf32_emulated(target):
    # tf32 products keep 10 mantissa bits: errors of about 1e-3 relative
    # to the outputs' scale, far above f32's, far below a wrong kernel's.
    ref, res, fp64 = _run("bert_base", target, allow_tf32=True)
    for i, (o, f) in enumerate(zip(res, fp64)):
        error = (o.double() - f).abs().max().item()
        scale = f.abs().max().item()
        assert error <= 5e-3 * scale, (
            f"bert_base tf32 on {target}, output {i}: max abs error {error:.3e} "
            f"for outputs up to {scale:.3e}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(MODELS))
def test_model_tile_ir_emulated(name, target, tmp_path):
    # codegen=tile-ir with tf32: BERT's linear layers, attention products,
    # softmaxes and layernorms and resnet18's classifier (read through a
    # reshaped view) become Tile IR kernels, run by the tile interpreter;
    # every other kernel (resnet18's f32 convolutions among them: tf32
    # convolutions are not Tile IR kernels yet) stays on the PTX path in
    # the kernel emulator. tf32 through resnet18's 20 convolutions gives
    # errors of about 0.7% of the outputs' scale on either path.
    compiler._memory_cache.clear()
    ref, res, fp64 = _run(name, target, allow_tf32=True, codegen="tile-ir")
    tolerance = 1e-2 if name == "resnet18" else 5e-3
    for i, (o, f) in enumerate(zip(res, fp64)):
        error = (o.double() - f).abs().max().item()
        scale = f.abs().max().item()
        assert error <= tolerance * scale, (
            f"{name} with codegen=tile-ir on {target}, output {i}: max abs "
            f"error {error:.3e} for outputs up to {scale:.3e}")
    families = set()
    for art in compiler._memory_cache.values():
        families |= matrix_unit_families(art, tmp_path)
    assert "tile-ir" in families, families


def test_resnet18_f16_tile_ir_emulated(tmp_path):
    # resnet18 in f16 with codegen=tile-ir: its convolutions are Tile IR
    # implicit GEMMs (tileiras' cubins, run by the tile interpreter), the
    # rest on the PTX path; f16 activations give errors of about 0.1% of
    # the outputs' scale (f32 accumulation in every product).
    model, inputs = models.build("resnet18", batch=1, **MODELS["resnet18"])
    with torch.no_grad():
        model64 = copy.deepcopy(model).double()
        fp64 = models.output_tensors(model64(*(x.double() for x in inputs)))
        half = copy.deepcopy(model).half()
        compiler._memory_cache.clear()
        compiled = compile_strict(half, target="nvidia-sm90", emulate=True,
                                  codegen="tile-ir")
        res = models.output_tensors(compiled(*(x.half() for x in inputs)))
    for i, (o, f) in enumerate(zip(res, fp64)):
        error = (o.double() - f).abs().max().item()
        scale = f.abs().max().item()
        assert error <= 5e-3 * scale, (
            f"resnet18 f16 with codegen=tile-ir, output {i}: max abs error "
            f"{error:.3e} for outputs up to {scale:.3e}")
    families = set()
    for art in compiler._memory_cache.values():
        families |= matrix_unit_families(art, tmp_path)
    assert "tile-ir" in families, families
