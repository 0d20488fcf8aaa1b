"""Procedural terrain generation."""
