"""The collector implementations a trace config may name.

Apart from the collector and the session so that both, and the command line,
share the names without importing each other.
"""

TRACERS = ("auto", "c", "python")
"""``auto``: C when the extension is built, else the Python collector."""
