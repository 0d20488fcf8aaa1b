"""From a baked run's cache: exactly the entries its builds made (binary + .meta per identity, LTO files)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from warp_fix.bake.archive import sha256_file
from warp_fix.bake.errors import BakeError
from warp_fix.bake.layout import LTO_DIR, module_directory
from warp_fix.bake.manifest import ArtifactFile, ModuleEntry, Target, options_from_mapping
from warp_fix.report import ModuleBuild

_CUDA_BINARY = re.compile(r"\.sm(?P<arch>\d+)(?P<suffix>[af]?)\.(?P<output>ptx|cubin)$")
_CPU_OBJECT = re.compile(r"(\.cpu[0-9a-f]+)?\.o$")


def file_kind(file_name: str) -> str | None:
    """meta | cpu-object | ptx | cubin; None for what a cache hit does not read (generated source, temp files)."""
    if file_name.endswith(".meta"):
        return "meta"
    if match := _CUDA_BINARY.search(file_name):
        return match["output"]
    if _CPU_OBJECT.search(file_name):
        return "cpu-object"
    return None


def target_of(file_name: str, origin: str) -> Target | None:
    if match := _CUDA_BINARY.search(file_name):
        return Target("cuda", int(match["arch"]), match["output"], origin, match["suffix"])
    if _CPU_OBJECT.search(file_name):
        return Target("cpu", None, "cpu-object", origin)
    return None


def artifact(root: Path, path: Path, kind: str) -> ArtifactFile:
    return ArtifactFile(path.relative_to(root).as_posix(), kind, path.stat().st_size, sha256_file(path))


def entries_from_builds(root: Path, builds: Iterable[ModuleBuild], aot_files: set[str]) -> list[ModuleEntry]:
    """One entry per identity (name, full hash) the run built; `aot_files` are paths --arch compiled."""
    entries: dict[tuple[str, str], ModuleEntry] = {}
    for build in builds:
        if build.status == "error" or not build.hash or (build.module, build.hash) in entries:
            continue
        entries[(build.module, build.hash)] = _entry(root, build, aot_files)
    return list(entries.values())


def _entry(root: Path, build: ModuleBuild, aot_files: set[str]) -> ModuleEntry:
    directory = module_directory(build.module, build.hash, bool(build.options.get("strip_hash")))
    folder = root / directory
    if not folder.is_dir():
        raise BakeError(f"the run built {build.module} {build.hash[:7]} but its cache entry {folder} is missing")
    files, targets = [], []
    for path in sorted(folder.iterdir()):
        kind = file_kind(path.name)
        if kind is None or not path.is_file():
            continue
        files.append(artifact(root, path, kind))
        origin = "aot" if files[-1].path in aot_files else "run"
        if (target := target_of(path.name, origin)) is not None:
            targets.append(target)
    return ModuleEntry(
        name=build.module,
        hash=build.hash,
        block_dim=build.block_dim,
        directory=directory,
        options=options_from_mapping(build.options),
        kernels=tuple(sorted(build.kernels)),
        generics=tuple(sorted(build.generics)),
        targets=tuple(targets),
        files=tuple(files),
    )


def lto_files(root: Path) -> list[ArtifactFile]:
    folder = root / LTO_DIR
    if not folder.is_dir():
        return []
    return [artifact(root, path, "lto") for path in sorted(folder.rglob("*")) if path.is_file()]
