"""Which files the scan reads, and the Python module name each one gets at run time."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
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
    """Dotted module name: the file's package chain.

    The chain is the folders from the file up to its outermost package (a folder with `__init__.py`); a folder
    without one inside a package is a namespace package of it (PEP 420: `newton/_src/core/x.py`, with no
    `_src/__init__.py`, is `newton._src.core.x`). In the repository the chain stops at root (`python -m pkg.mod`
    run from root); in a library root (`bounded=False`) it climbs as far as the packages go, short of the
    `site-packages` folder, so `site-packages/lib/sub/x.py` is "lib.sub.x". A script outside any package gets its
    stem, as `python script.py` would import it from its own folder; `pkg/__init__.py` gives "pkg".
    """
    parts = [] if path.name == "__init__.py" else [path.stem]
    folders = _folders_up_to(path.parent, root, bounded)
    outermost = max((i for i, folder in enumerate(folders) if _is_package(folder)), default=-1)
    parts[:0] = [folder.name for folder in reversed(folders[: outermost + 1])]
    return ".".join(parts) if parts else path.parent.name


def _folders_up_to(directory: Path, root: Path, bounded: bool) -> list[Path]:
    """`directory` and the folders above it that may hold its packages: below root in the repository; below the
    `site-packages` folder (or the filesystem's root) for a library."""
    folders = []
    while directory != directory.parent:
        if (bounded and root not in directory.parents) or directory.name in _PATH_ENTRIES:
            break
        if not bounded and not _is_package(directory) and not _inside_a_package(directory):
            break  # a library's folders above its outermost package
        folders.append(directory)
        directory = directory.parent
    return folders


_PATH_ENTRIES = frozenset({"site-packages", "dist-packages"})


@cache
def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file()


@cache
def _inside_a_package(folder: Path) -> bool:
    parent = folder.parent
    return parent != folder and (_is_package(parent) or _inside_a_package(parent))


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
