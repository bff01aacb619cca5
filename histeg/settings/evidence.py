"""The divergence classes by name, after the Shadow paper, and which of them a test can tell.

Named here, with the settings, because the option table chooses among them (``evidence-first``); the
comparison classifies divergences into them (``histeg.compare.classes``) and the ranking counts them.
"""

from __future__ import annotations

from typing import Final

EXCEPTION_ONLY_IN_NEW: Final = "exceptionOnlyInNew"
EXCEPTION_ONLY_IN_OLD: Final = "exceptionOnlyInOld"
OUTCOME_CHANGED: Final = "outcomeChanged"
SILENT: Final = "silent"
CLASSES = (EXCEPTION_ONLY_IN_NEW, EXCEPTION_ONLY_IN_OLD, OUTCOME_CHANGED, SILENT)
EVIDENCE = (OUTCOME_CHANGED, EXCEPTION_ONLY_IN_NEW, EXCEPTION_ONLY_IN_OLD)
"""The classes a test can tell: all but silent."""
EVIDENCE_FIRST = (OUTCOME_CHANGED, EXCEPTION_ONLY_IN_NEW)
"""The classes that, by default, put a target above every target none of whose divergences has one (``evidence-first``):
a test whose outcome changed, or a call that raises where it returned, says that the change matters; a silent
divergence may be a value the change was meant to change, and many of them (a table read by every test) add up to
a large value that says little."""
