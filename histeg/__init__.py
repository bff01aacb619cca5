"""histeg: what to test after each change.

Kept import-free on purpose: the tracer imports this package inside other
people's processes, so nothing heavy may load here. It is imported there
before pytest starts, so pytest must not try to rewrite it (its warning would
change the run's summary, and fail suites that turn warnings into errors):
PYTEST_DONT_REWRITE
"""

__version__ = "0.1.0"
