"""Each version's own environment: what it declares, the interpreter it needs, a shared virtual environment."""
