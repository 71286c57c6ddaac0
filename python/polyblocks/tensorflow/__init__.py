"""TensorFlow programs compiled by PolyBlocks.

    import polyblocks.tensorflow as ptf

    @ptf.function
    def f(x): ...

    loaded = ptf.load("saved_model_dir")      # its serving signature

TensorFlow lowers the function to StableHLO through its XLA bridge
(``tf.function(jit_compile=True).experimental_get_compiler_ir``); the
StableHLO frontend shared with JAX (:mod:`polyblocks.stablehlo`) converts
it, and :func:`polyblocks.compile` compiles it. Keras models:
:func:`polyblocks.keras.compile`.
"""

from .api import Function, Lowered, function, load

__all__ = ["function", "load", "Function", "Lowered"]
