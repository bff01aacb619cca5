"""The pipeline as a list of steps with declared inputs; reuse is decided in ``engine.runner`` alone."""
