"""Comparing traces of two versions: matching, edit distances, divergences."""
