"""warp-fix: find why a Warp application compiles more than it needs at cold start, and fix it."""

__version__ = "0.1.0"
