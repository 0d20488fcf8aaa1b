"""Entry points: `if __name__ == "__main__":` blocks, `__main__.py` files and console scripts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ..index import EntryPoint
from .base import Collector

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    tomllib = None  # type: ignore[assignment]

MAIN_GUARD_TEXT = re.compile(r"""^if\s+__name__\s*==\s*(['"])__main__\1\s*:""", re.MULTILINE)


class MainGuardCollector(Collector):
    """Finds a module-level `if __name__ == "__main__":`."""

    NODE_TYPES = (ast.If,)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.If)
        if isinstance(self.parsed.parent_of(node), ast.Module) and _is_main_test(node.test):
            info = self.parsed.info
            self.found.entry_points.append(
                EntryPoint(kind="main_guard", file=info.file, line=node.lineno, in_repo=info.in_repo)
            )


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
    return has_name and has_main


def main_guard_line(text: str) -> int | None:
    """Line of `if __name__ == "__main__":` found textually (for files the prefilter did not parse)."""
    match = MAIN_GUARD_TEXT.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def console_scripts(root: Path, file_of_module: dict[str, str]) -> tuple[list[EntryPoint], list[str]]:
    """`[project.scripts]` of root/pyproject.toml, each mapped to its file when it can be found.

    Returns (entry points, warnings).
    """
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file() or tomllib is None:
        return [], []
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as error:
        return [], [f"pyproject.toml: unreadable ({error})"]
    entries = []
    for name, target in sorted(project.get("scripts", {}).items()):
        module = str(target).split(":")[0].strip()
        file = file_of_module.get(module) or _module_file(root, module)
        entries.append(EntryPoint(kind="console_script", file=file, name=name, target=str(target)))
    return entries, []


def _module_file(root: Path, module: str) -> str | None:
    relative = Path(*module.split("."))
    for base in (root, root / "src"):
        for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
            if candidate.is_file():
                return candidate.relative_to(root).as_posix()
    return None
