"""From divergences and syntax changes to ranked testing targets (thesis section 4.6)."""
