"""Merge mode (--merges): a merge compared with both parents and their merge base, after the TOM paper."""
