"""The JAX frontend: ``polyblocks.jax.jit`` compiles JAX functions from
their StableHLO.

    import polyblocks.jax
    f = polyblocks.jax.jit(lambda x, w: jax.nn.relu(x @ w))
    y = f(x, w)                       # a jax.Array
    print(f.lower(x, w).as_text())    # the module PolyBlocks compiles
"""

from .api import Jitted, Lowered, jit
from ..stablehlo import UnsupportedOp, convert

__all__ = ["jit", "Jitted", "Lowered", "UnsupportedOp", "convert"]
