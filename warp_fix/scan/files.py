"""Which files the scan reads, and the Python module name each one gets at run time."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from warp_fix.ownership import folder_verdict


def discover_python_files(root: Path) -> Iterator[Path]:
    """Yield `.py` files under root in a stable order, skipping the folders that hold no project code (the one
    rule of `warp_fix.ownership`: virtualenvs and conda environments whatever their name, site-packages, vendored
    copies, build output, VCS and tool data)."""
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if folder_verdict(Path(directory) / d, root) is None)
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield Path(directory) / name


def mentions_warp(text: str) -> bool:
    """Cheap prefilter: a file that never says "warp" cannot define or call Warp code."""
    return "warp" in text


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))", re.MULTILINE
)


def imported_modules(text: str) -> list[str]:
    """What a file the prefilter skips imports, read by a line pattern rather than a parse: each module as written
    (relative ones with their dots), and `pkg.name` for each `from pkg import name`, which may be a submodule.
    A line of a string that looks like an import counts too: more imports only widen what a program can run."""
    found: list[str] = []
    for from_module, names, modules in _IMPORT.findall(text):
        if from_module:
            found.append(from_module)
            joint = "" if from_module.endswith(".") else "."
            found += [f"{from_module}{joint}{name.split()[0]}" for name in names.strip("() \\").split(",")
                      if name.split() and name.split()[0] != "*"]
        else:
            found += [module.split()[0] for module in modules.split(",") if module.split()]
    return list(dict.fromkeys(found))


def python_module_name(path: Path, root: Path, *, bounded: bool = True) -> str:
    """Dotted module name: the file's package chain (folders with `__init__.py`).

    In the repository the chain stops at root (`python -m pkg.mod` run from root);
    in a library root (`bounded=False`) it climbs as far as the packages go, so
    `site-packages/lib/sub/x.py` is "lib.sub.x". A script outside any package gets its
    stem, as `python script.py` would import it from its own folder; `pkg/__init__.py` gives "pkg".
    """
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and (not bounded or root in directory.parents):
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) if parts else path.parent.name


def relative_posix(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def top_level_module_names(root: Path) -> frozenset[str]:
    """Names a project import can start with: top-level packages/modules at root and under `src/`."""
    names: set[str] = set()
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            if entry.is_dir() and (entry / "__init__.py").is_file():
                names.add(entry.name)
            elif entry.suffix == ".py":
                names.add(entry.stem)
    return frozenset(names)
