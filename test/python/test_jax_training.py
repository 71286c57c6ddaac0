"""Training through polyblocks.jax.jit (strict: nothing runs through XLA):
the reverse-mode ops jax.grad makes (select_and_scatter for a max pool's
gradient, scatter-adds for take_along_axis) and a Flax CNN's whole
training step with optax, against jax.jit (XLA CPU)."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import polyblocks.jax as pj  # noqa: E402


def _close(a, b, tol=1e-5):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


POOLS = [
    # (window, strides, padding): NHWC max pools
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    ((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),     # padded windows
    ((1, 3, 3, 1), (1, 1, 1, 1), "VALID"),    # overlapping windows
]


@pytest.mark.parametrize("pool", POOLS, ids=lambda p: f"w{p[0][1]}-s{p[1][1]}-{p[2]}")
def test_max_pool_gradient_select_and_scatter(pool):
    window, strides, padding = pool
    # Distinct values: the gradient goes to one element per window.
    x = jnp.asarray(np.random.RandomState(0).permutation(2 * 7 * 8 * 3)
                    .reshape(2, 7, 8, 3).astype(np.float32))

    def loss(x):
        y = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, padding)
        return (y * jnp.arange(y.size, dtype=jnp.float32).reshape(y.shape)).sum()
    g = jax.grad(loss)
    _close(pj.jit(g, strict=True)(x), jax.jit(g)(x))


def test_max_pool_gradient_ties_go_to_the_first():
    # A window of equal elements: XLA's select (GE) keeps the first.
    x = jnp.ones((1, 4, 4, 1), jnp.float32)

    def loss(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                     (1, 2, 2, 1), "VALID").sum()
    g = jax.grad(loss)
    _close(pj.jit(g, strict=True)(x), jax.jit(g)(x))


def test_cross_entropy_gradient():
    # optax's cross-entropy takes the label logits with take_along_axis and
    # .take(0): its gradient is two scatter-adds, the first an elementwise
    # producer that reads its output's initial value.
    optax = pytest.importorskip("optax")
    logits = jnp.asarray(np.random.RandomState(0).randn(8, 10), jnp.float32)
    labels = jnp.arange(8) % 10

    def loss(logits):
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    g = jax.grad(loss)
    _close(pj.jit(g, strict=True)(logits), jax.jit(g)(logits))


def test_flax_cnn_training_step():
    nn = pytest.importorskip("flax.linen")
    optax = pytest.importorskip("optax")

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Conv(16, (3, 3), strides=2)(x))
            x = nn.max_pool(x, (2, 2), strides=(2, 2))
            x = nn.relu(nn.Conv(32, (3, 3))(x))
            return nn.Dense(10)(x.mean(axis=(1, 2)))

    model = CNN()
    x = jnp.asarray(np.random.RandomState(0).randn(8, 32, 32, 3), jnp.float32)
    y = jnp.arange(8) % 10
    params = model.init(jax.random.PRNGKey(0), x)
    tx = optax.sgd(0.1, momentum=0.9)

    def step(params, state, x, y):
        def loss(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        value, grads = jax.value_and_grad(loss)(params)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value, grads

    ours, xla = pj.jit(step, strict=True), jax.jit(step)
    p1, s1 = params, tx.init(params)
    p2, s2 = params, tx.init(params)
    for _ in range(3):
        p1, s1, l1, g1 = ours(p1, s1, x, y)
        p2, s2, l2, g2 = xla(p2, s2, x, y)
        np.testing.assert_allclose(float(l1), float(l2), rtol=1e-5)
        _close(g1, g2, tol=1e-4)
    _close(p1, p2, tol=1e-4)
