"""Keras applications (random weights, batch norms' statistics randomized,
small images to keep the test short) through polyblocks.keras.compile with
strict=True, against Keras' own inference: whole models convert without a
fallback and agree with TensorFlow."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import polyblocks.keras as pk  # noqa: E402
from test_tensorflow_layers import _randomize_norms  # noqa: E402

MODELS = {
    "resnet50": lambda: keras.applications.ResNet50(
        weights=None, input_shape=(64, 64, 3), classifier_activation=None),
    "mobilenet_v2": lambda: keras.applications.MobileNetV2(
        weights=None, alpha=0.35, input_shape=(96, 96, 3), classifier_activation=None),
    "efficientnet_b0": lambda: keras.applications.EfficientNetB0(
        weights=None, input_shape=(64, 64, 3), classifier_activation=None),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras_application(name):
    keras.utils.set_random_seed(0)
    model = MODELS[name]()
    _randomize_norms(model)
    shape = (2,) + tuple(model.input_shape[1:])
    x = np.random.default_rng(1).uniform(0, 255, shape).astype(np.float32)
    got = pk.compile(model, strict=True)(x).numpy()
    want = model(x, training=False).numpy()
    scale = float(np.abs(want).max())
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * scale)
