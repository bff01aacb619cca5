"""histeg's layers, lowest first: a module may import only from its own layer or a lower one.

Each name is a folder of ``histeg/`` (a package, counted as one module) or a
top-level module; ``__init__`` is the package's own, the Python API. The order
follows the data: leaves and the tracer (which runs inside other people's
processes), the trace reader and sealer, the settings and the records they type, the output directory,
extraction and environments, the steps in pipeline order, the pipeline, the API,
the command line. Written down once, here; ``tests/test_layout.py`` checks every
import against it, lazy and ``TYPE_CHECKING`` ones included, and forbids cycles
between folders.
"""

from __future__ import annotations

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "naming", "version", "atomic", "console", "locations", "layers"),
    ("tracing",),
    ("traces",),
    ("settings",),
    ("records",),
    ("store",),
    ("results", "run_settings", "processes", "step"),
    ("history", "envs"),
    ("engine", "build", "runs", "statics", "syntax"),
    ("compare",),
    ("impact",),
    ("merges",),
    ("generate", "report"),
    ("pipeline",),
    ("project",),
    ("demo", "samples"),
    ("cli", "__main__", "__init__"),
)
"""Lowest first; names in one layer may import each other, as long as no two folders import each other."""
