"""The collector implementations a trace config may name, and the budgets every collector shares.

Apart from the collector and the session so that both, and the command line,
share the names and defaults without importing each other.
"""

VALUE_BUDGET = 64
"""Values are recorded for the first N calls of each function per entry point (0: every call)."""
LINE_BUDGET = 64
"""Lines are recorded for the first N calls of each function per entry point (0: every call)."""
LINE_CAP = 1 << 20
"""And for its first N line events per entry point (0: no bound). A lexer's loop over a long input makes millions of
line events in one call, each paying sys.monitoring's dispatch (about 300 instructions): on sqlparse's suite two
calls made 11 of its 17.8 M line events, 9 M of them beyond their first 2^20. A path that long is compared as "at
least the cutoff" (``histeg.compare.sequences``) wherever it differs; past the cap its lines are unknown instead."""

TRACERS = ("auto", "c", "python")
"""``auto``: C when the extension is built, else the Python collector."""
