"""Counts in words, as a reader says them: "1 build", "3 builds", "1 fix", never "build(s)".

>>> counted(1, "extra build"), counted(3, "extra build"), counted(2, "fix", "fixes")
('1 extra build', '3 extra builds', '2 fixes')
>>> named(["a", "b", "c", "d", "e"]), named(["a", "b"])
('a, b, c and 2 more', 'a, b')
"""

from __future__ import annotations


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """`singular` for one, else `plural` (default: `singular` + "s")."""
    return singular if count == 1 else plural or singular + "s"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """The count and its noun: `counted(1, "module")` is "1 module"."""
    return f"{count:,} {noun(count, singular, plural)}"


def named(names: list[str], limit: int = 3) -> str:
    """The first `limit` names, and how many more: a reason stays one short sentence (the JSON keeps them all)."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
