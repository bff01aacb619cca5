"""histeg: what to test after each change.

Kept import-free on purpose: the tracer imports this package inside other
people's processes, so nothing heavy may load here.
"""

__version__ = "0.1.0"
