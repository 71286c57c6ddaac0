"""Minimal stand-in for the `expecttest` package, used only when it is not
installed: torch.testing._internal.common_utils imports it for its TestCase
base class, which the OpInfo tests never use for expect-tests."""

import unittest

__all__ = ["TestCase"]


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802
        self.assertEqual(str(actual).strip(), str(expect).strip())

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):  # noqa: N802
        with self.assertRaises(exc_type) as ctx:
            callable(*args, **kwargs)
        self.assertExpectedInline(str(ctx.exception), expect)
