"""Runs Pynguin as ``__main__`` in Pynguin's own environment, with a version's own code and packages importable.

``TOOL-PYTHON -P .../launcher.py PYNGUIN-ARGS...``: the folders in
``HISTEG_GENERATE_PATH`` (the version's sources, its installed project, its
environment's site-packages) are appended to ``sys.path``, after Pynguin's
packages, so Pynguin keeps its own dependencies while the module under test
imports the version's. Nothing is installed into the version. Standard
library only: it runs as a file in an environment where histeg is not
installed.
"""

from __future__ import annotations

import os
import runpy
import sys

PATH_VARIABLE = "HISTEG_GENERATE_PATH"


def main() -> None:
    for folder in os.environ.get(PATH_VARIABLE, "").split(os.pathsep):
        if folder and folder not in sys.path:
            sys.path.append(folder)
    sys.argv[0] = "pynguin"
    runpy.run_module("pynguin", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
