"""Whose code a file is, from where it lies: the one rule the scan, the probe's paths and the scope share.

A file under the repository is not the project's code because it sits there: a virtualenv that `uv` or
`python -m venv` made at the root (`.venv/`, `venv/`, `env/`: any folder holding `pyvenv.cfg`), a conda
environment (`conda-meta/`), tox and nox environments, `site-packages` anywhere and a vendored copy (`vendor/`,
`_vendor/`, `third_party/`) hold installed or copied packages, which a fix never rewrites. `warp_fix.scope`
adds what only the run, the source and the configuration can tell (optional code, maintenance paths, protected
paths, generated files).

    >>> place_of("/repo/src/app/sim.py", "/repo").owner
    <Owner.PROJECT: 'project'>
    >>> place_of("/repo/vendor/lib/kernels.py", "/repo").reason
    'a vendored copy (vendor/)'
    >>> place_of("<string>", "/repo").owner
    <Owner.GENERATED: 'generated'>
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path, PurePosixPath


class Owner(str, Enum):
    """Whose code something is; `warp_fix.scope` gives each the highest safety a fix may have there."""

    PROJECT = "project"  # the project's own code
    OPTIONAL = "optional"  # the project's optional code: a plugin, a registry entry, one of a set picked per run
    MAINTENANCE = "maintenance"  # a guarded rebuild path, or a path the configuration protects
    INSTALLED = "installed"  # an installed or vendored package, wherever it sits
    WARP = "warp"  # Warp's own modules
    GENERATED = "generated"  # a file that says it is generated, or code compiled from a string


@dataclass(frozen=True)
class Verdict:
    """Whose code it is and why, in one line; `path` is repo-relative (posix) when it lies under the root."""

    owner: Owner
    reason: str
    path: str | None = None

    @property
    def is_project(self) -> bool:
        return self.owner is Owner.PROJECT


PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})
VENDOR_FOLDERS = frozenset({"vendor", "_vendor", "vendored", "third_party", "thirdparty", "extern", "external"})
# environments by their conventional names (uv's and venv's default, tox, nox), whatever they hold; any other
# folder is one when it holds `pyvenv.cfg` or `conda-meta/`
ENVIRONMENT_FOLDERS = frozenset({".venv", "venv", ".tox", ".nox"})
NOT_SOURCE_FOLDERS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "node_modules"}
)
BUILD_FOLDERS = frozenset({"build"})  # setuptools' copies of the sources


def place_of(file: str, root: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None) -> Verdict:
    """The verdict for a file the run or the scan names (absolute, or relative to `cwd`, default `root`)."""
    if file.startswith("<"):
        return Verdict(Owner.GENERATED, "code compiled from a string")
    base = Path(cwd) if cwd is not None else Path(root)
    real = Path(os.path.realpath(file if os.path.isabs(file) else base / file))
    top = Path(os.path.realpath(root))
    parts = real.parts
    if any(part in PACKAGE_FOLDERS for part in parts):
        inside = [i for i, part in enumerate(parts) if part in PACKAGE_FOLDERS][-1] + 1
        if parts[inside:inside + 1] == ("warp",):
            return Verdict(Owner.WARP, "Warp's own code", _relative(real, top))
        return Verdict(Owner.INSTALLED, "an installed package (site-packages)", _relative(real, top))
    if _is_warps_tree(parts):
        return Verdict(Owner.WARP, "Warp's own code", _relative(real, top))
    relative = _relative(real, top)
    if relative is None:
        return Verdict(Owner.INSTALLED, "a package outside the repository (reached through sys.path)")
    folder = top
    for part in PurePosixPath(relative).parts[:-1]:
        folder = folder / part
        verdict = folder_verdict(folder, top)
        if verdict is not None:
            return Verdict(verdict.owner, verdict.reason, relative)
    return Verdict(Owner.PROJECT, "the project's own code", relative)


def folder_verdict(folder: Path, root: Path) -> Verdict | None:
    """Why a folder of the repository holds no project code (None: it may). The scan skips such folders."""
    name = folder.name
    shown = f"{folder.relative_to(root).as_posix()}/" if folder.is_relative_to(root) else f"{name}/"
    if name in NOT_SOURCE_FOLDERS or name.endswith(".egg-info"):
        return Verdict(Owner.GENERATED, f"tool data ({shown})")
    if name in BUILD_FOLDERS:
        return Verdict(Owner.GENERATED, f"build output ({shown})")
    if name in PACKAGE_FOLDERS:
        return Verdict(Owner.INSTALLED, "an installed package (site-packages)")
    if name in VENDOR_FOLDERS:
        return Verdict(Owner.INSTALLED, f"a vendored copy ({shown})")
    if name in ENVIRONMENT_FOLDERS:
        return Verdict(Owner.INSTALLED, f"a tool's environment ({shown})")
    kind = _environment(str(folder))
    if kind:
        return Verdict(Owner.INSTALLED, f"a {kind} inside the repository ({shown})")
    return None


@lru_cache(maxsize=4096)
def _environment(folder: str) -> str:
    """"virtualenv" / "conda environment" for a folder that is one (by the files that make it one), else ""."""
    if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
        return "virtualenv"
    if os.path.isdir(os.path.join(folder, "conda-meta")):
        return "conda environment"
    return ""


def _is_warps_tree(parts: tuple[str, ...]) -> bool:
    """Warp run from a source tree or a folder on PYTHONPATH: its package is `warp/` with `_src/` inside."""
    return any(part == "warp" and parts[i + 1] == "_src" for i, part in enumerate(parts[:-1]))


def _relative(real: Path, top: Path) -> str | None:
    if real == top or not real.is_relative_to(top):
        return None
    return real.relative_to(top).as_posix()
