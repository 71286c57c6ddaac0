# Shim for legacy editable installs (`pip install -e python --no-use-pep517`)
# where the `wheel` package is not available; all metadata is in
# pyproject.toml.
from setuptools import setup

setup()
