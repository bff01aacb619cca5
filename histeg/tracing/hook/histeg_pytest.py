"""pytest loads this through ``PYTEST_PLUGINS`` in traced runs: the test-label plugin, whether or
not histeg is installed in the environment that runs the tests (it then registers only once)."""

from histeg.tracing.pytest_plugin import pytest_configure  # noqa: F401
