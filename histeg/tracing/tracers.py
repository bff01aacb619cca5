"""The collector implementations a trace config may name, and the budgets every collector shares.

Apart from the collector and the session so that both, and the command line,
share the names and defaults without importing each other.
"""

VALUE_BUDGET = 64
"""Values are recorded for the first N calls of each function per entry point (0: every call)."""
LINE_BUDGET = 64
"""Lines are recorded for the first N calls of each function per entry point (0: every call)."""

TRACERS = ("auto", "c", "python")
"""``auto``: C when the extension is built, else the Python collector."""
