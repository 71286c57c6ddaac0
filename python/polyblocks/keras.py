"""``polyblocks.keras.compile``: a Keras model's inference compiled by
PolyBlocks.

    model = keras.applications.ResNet50(weights=None)
    fast = polyblocks.keras.compile(model)
    y = fast(x)                         # model(x, training=False)
    y = fast.predict(images, batch_size=32)

Keras 3 on its TensorFlow backend: the model's call in inference mode goes
through :func:`polyblocks.tensorflow.function`, its weights read at each
call (so that training or ``load_weights`` after compiling is seen). With
the JAX backend, use :func:`polyblocks.jax.jit` on a stateless call; with
the torch backend, ``torch.compile(model, backend="polyblocks")``.
"""

from __future__ import annotations

import math

__all__ = ["compile", "CompiledModel"]


def compile(model, *, target: str = "auto", strict: bool = False, options=None):
    """``model`` (a ``keras.Model`` or layer) compiled for inference;
    ``target``, ``strict`` and ``options`` as for
    :func:`polyblocks.tensorflow.function`."""
    import keras

    backend = keras.backend.backend()
    if backend != "tensorflow":
        hint = {"jax": "polyblocks.jax.jit on model.stateless_call",
                "torch": 'torch.compile(model, backend="polyblocks")'}.get(backend, "")
        raise ValueError(f"polyblocks.keras.compile: Keras' backend is {backend!r}, not "
                         f"'tensorflow'" + (f"; use {hint}" if hint else ""))
    if not isinstance(model, keras.layers.Layer):
        raise TypeError(f"polyblocks.keras.compile: a keras.Model or layer, not "
                        f"{type(model).__name__}")
    return CompiledModel(model, target, strict, options)


class CompiledModel:
    """A Keras model whose inference runs in PolyBlocks' code."""

    def __init__(self, model, target, strict, options):
        from .tensorflow import function

        self.model = model

        def infer(*inputs):
            return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

        infer.__name__ = getattr(model, "name", None) or type(model).__name__
        self.function = function(infer, target=target, strict=strict, options=options)

    def __call__(self, *inputs):
        """``model(inputs, training=False)``, as tensors; numpy arrays are
        converted first."""
        import tensorflow as tf

        return self.function(*[tf.convert_to_tensor(x) if not isinstance(x, tf.Tensor) else x
                               for x in inputs])

    def predict(self, x, batch_size: int = 32):
        """``model.predict(x, batch_size)``: the inputs (an array, or a
        list of arrays for a model with several inputs) in batches of
        ``batch_size``, the results as numpy arrays concatenated along the
        batch (one compilation per batch size, the last batch's included)."""
        import tensorflow as tf

        xs = x if isinstance(x, (list, tuple)) else [x]
        n = int(xs[0].shape[0])
        if batch_size < 1:
            raise ValueError(f"predict: batch_size must be positive, not {batch_size}")
        parts = []
        for b in range(math.ceil(n / batch_size)):
            chunk = [tf.convert_to_tensor(a[b * batch_size:(b + 1) * batch_size]) for a in xs]
            parts.append(tf.nest.map_structure(lambda t: t.numpy(), self.function(*chunk)))
        import numpy as np
        return tf.nest.map_structure(lambda *a: np.concatenate(a, axis=0), *parts)
