"""What a file's names are, read with `ast`: the checks a transformation's precondition makes before it renames."""

from __future__ import annotations

import ast


def names_in(text: str) -> set[str]:
    """Every name the file reads, binds, defines or takes as a parameter (attribute names excluded)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
    return found


def module_level_warp_alias(text: str) -> str | None:
    """The name a module-scope `import warp as <name>` binds (None: the file imports Warp another way)."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Import) and len(node.names) == 1 and node.names[0].name == "warp":
            return node.names[0].asname
    return None


def warp_bound_elsewhere(text: str, alias: str) -> bool:
    """`alias` is bound by something other than the module-scope `import warp as alias` (a parameter, a loop)."""
    tree = ast.parse(text)
    imports = [n for n in tree.body if isinstance(n, ast.Import) and n.names[0].asname == alias]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == alias and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.arg) and node.arg == alias:
            return True
        rebinds = isinstance(node, (ast.Import, ast.ImportFrom)) and node not in imports
        if rebinds and any((a.asname or a.name.split(".")[0]) == alias for a in node.names):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == alias:
            return True
    return False
