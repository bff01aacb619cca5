"""Static facts of one version: its function table and its call graph.

Computed once per version from the snapshot's Python files (``ast``), so that
later steps can name, locate and relate the functions the tracer reports.
"""
