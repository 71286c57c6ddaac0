"""polyblocks.tensorflow.function as a tf.function user sees it: decorator
forms, nested structures in and out, keyword arguments, numpy and python
arguments, one compilation per signature, variables read at each call,
``lower()``, the XLA fallback with its warning, strict mode, SavedModels,
and polyblocks.keras.compile's errors and predict."""

import logging

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import polyblocks.tensorflow as ptf  # noqa: E402


def _rand(shape, seed=0):
    return tf.constant(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _close(a, b, rtol=1e-5, atol=1e-5):
    a_flat, b_flat = tf.nest.flatten(a), tf.nest.flatten(b)
    tf.nest.assert_same_structure(a, b)
    for x, y in zip(a_flat, b_flat):
        assert isinstance(x, tf.Tensor), type(x)
        assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, x.dtype, y.shape, y.dtype)
        np.testing.assert_allclose(x.numpy().astype(np.float64), y.numpy().astype(np.float64),
                                   rtol=rtol, atol=atol)


def mlp(params, x):
    for w, b in params["layers"]:
        x = tf.nn.gelu(x @ w + b)
    return {"logits": x @ params["head"], "mean": tf.reduce_mean(x, axis=-1)}


def _params():
    return {"layers": [(_rand((16, 32), 1) * 0.2, _rand((32,), 2)),
                       (_rand((32, 32), 3) * 0.2, _rand((32,), 4))],
            "head": _rand((32, 5), 5)}


def test_structures_in_and_out():
    params, x = _params(), _rand((4, 16), 7)
    f = ptf.function(mlp, strict=True)
    out = f(params, x)
    assert set(out) == {"logits", "mean"}
    _close(out, tf.function(mlp)(params, x), rtol=1e-4, atol=1e-5)


def test_decorator_forms_and_kwargs():
    @ptf.function
    def f(x, y):
        return tf.tanh(x) * y

    @ptf.function(strict=True)
    def g(x, *, scale):
        return x * scale + 1.0

    x, y = _rand((3, 5)), _rand((3, 5), 1)
    _close(f(x, y=y), tf.tanh(x) * y)
    _close(g(x, scale=3.0), x * 3.0 + 1.0)
    _close(g(x, scale=2.0), x * 2.0 + 1.0)
    assert g.cache_size == 2  # python values are part of the signature


def test_numpy_arguments_and_one_compile_per_shape():
    f = ptf.function(lambda x: tf.nn.relu(x) + 1.0, strict=True)
    a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    _close(f(a), tf.nn.relu(a) + 1.0)
    _close(f(tf.constant(a)), tf.nn.relu(a) + 1.0)
    f(tf.constant(a * 2))
    assert f.cache_size == 2  # numpy array and tensor, one shape each
    f(tf.ones((5, 4)))
    assert f.cache_size == 3


def test_variables_are_read_at_each_call():
    w = tf.Variable(_rand((8, 4), 3))
    f = ptf.function(lambda x: tf.matmul(x, w), strict=True)
    x = _rand((2, 8), 4)
    _close(f(x), tf.matmul(x, w))
    w.assign(w * -2.0)
    _close(f(x), tf.matmul(x, w))
    w.assign_add(tf.ones_like(w))
    _close(f(x), tf.matmul(x, w))


def test_captured_constant_and_returned_input():
    c = tf.constant(np.full((4,), 0.5, np.float32))

    @ptf.function(strict=True)
    def f(x):
        return x, x + c, tf.zeros((2,))

    x = _rand((3, 4))
    a, b, z = f(x)
    _close(a, x)
    _close(b, x + c)
    _close(z, tf.zeros((2,)))


def test_lower_text():
    f = ptf.function(lambda x: tf.nn.softmax(x, axis=-1))
    lowered = f.lower(_rand((2, 6)))
    assert "stablehlo.exponential" in lowered.stablehlo_text()
    text = lowered.as_text()
    assert "func.func @forward" in text and "linalg" in text
    y = lowered.compile().executable()
    assert y is not None


def _unsupported(x):
    # sort has no emitter (the converter's list of unsupported ops).
    return tf.sort(x, axis=-1) * 2.0


def test_fallback_warns_once_and_is_correct(caplog):
    f = ptf.function(_unsupported)
    x = _rand((3, 7))
    with caplog.at_level(logging.WARNING, logger="polyblocks"):
        y = f(x)
        f(x)
        f(_rand((2, 7)))
    _close(y, tf.sort(x, axis=-1) * 2.0)
    warnings = [r for r in caplog.records if "runs through" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "stablehlo.sort" in warnings[0].getMessage()


def test_strict_raises_naming_the_op():
    f = ptf.function(_unsupported, strict=True)
    with pytest.raises(NotImplementedError, match="stablehlo.sort"):
        f(_rand((3, 7)))
    with pytest.raises(NotImplementedError, match="stablehlo.sort"):
        f.lower(_rand((3, 7))).as_text()


def test_non_cpu_target_is_refused():
    f = ptf.function(lambda x: x + 1.0, target="nvidia-sm90", strict=True)
    with pytest.raises(NotImplementedError, match="CPU only"):
        f(_rand((2, 2)))


def test_saved_model(tmp_path):
    class Scale(tf.Module):
        def __init__(self):
            self.w = tf.Variable(_rand((6, 3), 9))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32)])
        def serve(self, x):
            return {"y": tf.nn.relu(x @ self.w)}

    m = Scale()
    tf.saved_model.save(m, str(tmp_path), signatures={"serving_default": m.serve})
    served = ptf.load(str(tmp_path), strict=True)
    x = _rand((4, 6), 10)
    out = served(x=x)
    _close(out, {"y": tf.nn.relu(x @ m.w)})
    with pytest.raises(KeyError, match="serving_default"):
        ptf.load(str(tmp_path), "nope")


def test_keras_compile_and_predict():
    keras = pytest.importorskip("keras")
    import polyblocks.keras as pk

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    fast = pk.compile(model, strict=True)
    x = np.random.default_rng(1).standard_normal((10, 10)).astype(np.float32)
    _close(fast(x), model(x, training=False))
    np.testing.assert_allclose(fast.predict(x, batch_size=4), model.predict(x, batch_size=4,
                                                                            verbose=0),
                               rtol=1e-5, atol=1e-6)
    # A weight update after compiling is seen by the next call.
    model.layers[0].kernel.assign(model.layers[0].kernel * 0.5)
    _close(fast(x), model(x, training=False))
    with pytest.raises(TypeError, match="keras.Model"):
        pk.compile(lambda x: x)
