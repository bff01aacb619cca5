"""Test generation for a version's top testing targets: Pynguin writes tests, both versions run them, and a test
that passes on one and fails on the other witnesses the behaviour change (``histeg generate``).

``selection`` picks the targets and splits the budget, ``pynguin_run`` runs Pynguin per module through
``launcher``, ``verdicts`` runs the tests on each version, ``coverage`` maps tests to targets, ``run`` ties
them together and writes ``generation.json``.
"""
