"""Where a manifest may put files: a closed manifest names every file under the directory of an identity it has.

Each module's files lie directly in the directory Warp names that identity by (`wp_<name>_<hash[:7]>`),
MathDx LTO files under `lto/`, and nothing anywhere else: not a directory of an identity the manifest does
not name (Warp would load it), not warp-fix's own records, not a path that is both a file and a folder.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from warp_fix.bake.manifest import Manifest, ModuleEntry

LTO_DIR = "lto"
RECORDS_DIR = ".warp-fix-bake"  # restored manifests, which `bake verify` reads when none is given


def module_directory(name: str, module_hash: str, strip_hash: bool) -> str:
    """The directory Warp names a module identity by (`Module.get_module_identifier`)."""
    return f"wp_{name}" if strip_hash else f"wp_{name}_{module_hash[:7]}"


def layout_fault(manifest: Manifest) -> str | None:
    """The first path the manifest may not name, said in words; None for a closed manifest."""
    seen: set[str] = set()
    for module in manifest.modules:
        if module.directory != module_directory(module.name, module.hash, bool(module.option("strip_hash"))):
            return f"module {module.name} {module.hash[:7]} claims directory {module.directory}, not its own"
        for item in module.files:
            if fault := _path_fault(item.path) or _module_file_fault(module, item.path):
                return fault
    for item in manifest.lto:
        if fault := _path_fault(item.path) or _lto_fault(item.path):
            return fault
    for item in manifest.files:
        if item.path in seen:
            return f"the manifest lists {item.path} twice"
        seen.add(item.path)
    folders = {str(parent) for path in seen for parent in PurePosixPath(path).parents}
    if clash := sorted(seen & folders):
        return f"the manifest lists {clash[0]} as a file and as a folder"
    return None


def _path_fault(path: str) -> str | None:
    segments = path.split("/")  # as written: PurePosixPath would drop "." and empty segments
    if path.startswith("/") or "\\" in path or any(s in ("", ".", "..") for s in segments):
        return f"the manifest names a path outside the cache: {path}"
    if segments[0] == RECORDS_DIR:
        return f"the manifest names warp-fix's own record {path}: an archive may not write it"
    return None


def _module_file_fault(module: ModuleEntry, path: str) -> str | None:
    if PurePosixPath(path).parent.as_posix() != module.directory:
        return f"{path} is listed for {module.name} {module.hash[:7]} but lies outside its directory {module.directory}"
    return None


def _lto_fault(path: str) -> str | None:
    if PurePosixPath(path).parts[0] != LTO_DIR or len(PurePosixPath(path).parts) < 2:
        return f"{path} is listed as an LTO file but lies outside {LTO_DIR}/"
    return None
