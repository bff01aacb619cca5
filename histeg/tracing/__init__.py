"""The tracer: runs inside the traced process, so it imports only the standard library."""
