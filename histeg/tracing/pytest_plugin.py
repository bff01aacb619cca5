"""pytest plugin: labels traced entry points with the running test's node id.

Loaded in every pytest run of the environment (``pytest11`` entry point), so it
does nothing at all unless tracing is active in the process.
"""
