"""StableHLO op emitters, one module per family; importing this package
registers them in :data:`polyblocks.stablehlo.converter.EMITTERS`."""

from . import contractions, elementwise, indexing, reductions, shapes  # noqa: F401
