"""Benchmarks of PolyBlocks through its Python frontend.

    python -m polyblocks.bench --suite models --target cpu-host \\
        --baseline eager,inductor [--models resnet18,bert_base] [--runs 10]

See polyblocks.bench.__main__ for the options and the report's format.
"""
