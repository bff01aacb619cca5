"""Running a version's trace commands (its tests, modules, shell commands) under the tracer."""
