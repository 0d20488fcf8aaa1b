"""Semantics-preserving variants of the fixture apps: the same program written another way must get the same plan."""
