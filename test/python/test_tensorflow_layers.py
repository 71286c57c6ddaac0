"""Keras layers (TensorFlow backend) through polyblocks.keras.compile with
strict=True, each compared with Keras' own inference on the same input:
every layer must convert (no fallback) and agree with TensorFlow."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import polyblocks.keras as pk  # noqa: E402

L = keras.layers


def _randomize_norms(model, seed=0):
    """Batch norms' moving statistics and scales away from 0/1, so that
    inference-mode normalization is tested for real."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            for v in (layer.moving_mean, layer.beta):
                v.assign(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32))
            for v in (layer.moving_variance, layer.gamma):
                v.assign(rng.uniform(0.5, 1.5, v.shape).astype(np.float32))


def _mha_block():
    x = keras.Input((12, 32))
    h = L.LayerNormalization()(x)
    h = L.MultiHeadAttention(num_heads=4, key_dim=8)(h, h)
    x2 = L.Add()([x, h])
    f = L.Dense(64, activation="gelu")(L.LayerNormalization()(x2))
    return keras.Model(x, L.Add()([x2, L.Dense(32)(f)]))


def _causal_mha():
    x = keras.Input((10, 16))
    h = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x, use_causal_mask=True)
    return keras.Model(x, h)


def _embedding():
    ids = keras.Input((9,), dtype="int32")
    h = L.Embedding(50, 16)(ids)
    return keras.Model(ids, L.GlobalAveragePooling1D()(h))


def _two_inputs():
    a, b = keras.Input((8,)), keras.Input((8,))
    return keras.Model([a, b], L.Dense(4)(L.Concatenate()([a, b])))


CASES = {
    # name: (model builder, input shape(s), int input range or None)
    "dense_relu": (lambda: keras.Sequential([keras.Input((20,)), L.Dense(32, activation="relu"),
                                             L.Dense(5)]), (3, 20)),
    "conv2d_bn_relu": (lambda: keras.Sequential([
        keras.Input((16, 16, 3)), L.Conv2D(8, 3, padding="same", use_bias=False),
        L.BatchNormalization(), L.ReLU(), L.Conv2D(4, 3, strides=2)]), (2, 16, 16, 3)),
    "depthwise_separable": (lambda: keras.Sequential([
        keras.Input((12, 12, 8)), L.DepthwiseConv2D(3, padding="same"),
        L.SeparableConv2D(6, 3, activation="relu6")]), (2, 12, 12, 8)),
    "conv1d": (lambda: keras.Sequential([keras.Input((20, 4)), L.Conv1D(6, 5, padding="causal",
                                                                         dilation_rate=2),
                                         L.Conv1D(3, 3, strides=2)]), (2, 20, 4)),
    "pooling": (lambda: keras.Sequential([
        keras.Input((16, 16, 4)), L.MaxPooling2D(2), L.AveragePooling2D(3, strides=1,
                                                                          padding="same"),
        L.GlobalAveragePooling2D()]), (2, 16, 16, 4)),
    "activations": (lambda: keras.Sequential([
        keras.Input((30,)), L.Dense(30, activation="swish"), L.Activation("sigmoid"),
        L.Dense(30, activation="tanh"), L.Dense(30, activation="elu"),
        L.Dense(10, activation="softmax")]), (4, 30)),
    "reshape_flatten": (lambda: keras.Sequential([
        keras.Input((4, 6, 2)), L.Reshape((8, 6)), L.Permute((2, 1)), L.Flatten(),
        L.Dense(3)]), (2, 4, 6, 2)),
    "upsample_zeropad": (lambda: keras.Sequential([
        keras.Input((6, 6, 3)), L.UpSampling2D(2), L.ZeroPadding2D(1),
        L.Conv2D(4, 3)]), (1, 6, 6, 3)),
    "transformer_block": (_mha_block, (2, 12, 32)),
    "causal_attention": (_causal_mha, (2, 10, 16)),
    "embedding": (_embedding, (3, 9), 50),
    "two_inputs": (_two_inputs, [(5, 8), (5, 8)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer(name):
    builder, shapes, *int_range = CASES[name]
    keras.utils.set_random_seed(0)
    model = builder()
    _randomize_norms(model)
    rng = np.random.default_rng(1)
    many = isinstance(shapes, list)
    if int_range:
        xs = [rng.integers(0, int_range[0], shapes).astype(np.int32)]
    else:
        xs = [rng.standard_normal(s).astype(np.float32) for s in (shapes if many else [shapes])]
    fast = pk.compile(model, strict=True)
    got = fast(*xs)
    want = model(xs if many else xs[0], training=False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-4, atol=2e-5)
    assert fast.function.cache_size == 1
