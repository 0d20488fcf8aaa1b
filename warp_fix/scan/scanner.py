"""Walk a repository, parse the files that mention Warp, and feed every collector in one tree walk.

Python's `ast` does the walking (exact lines, fast); libcst resolves imported names
(`names.py`) and the scopes of kernel factories (`captures.py`), where its precision matters.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from . import files as discovery
from .collectors import ALL_COLLECTORS
from .collectors.entry_points import console_scripts, main_guard_line
from .collectors.kernels import link_selectors
from .index import EntryPoint, SourceFile, SourceIndex
from .names import NameRequest, NameResolver, dotted_name, resolve_files
from .parsed import FileInfo, ParsedFile, walk_with_parents

# Last identifiers of the dotted names worth resolving; anything else cannot be an item.
CANDIDATE_IDENTIFIERS = frozenset(
    [
        "kernel",
        "func",
        "func_native",
        "func_grad",
        "func_replay",
        "overload",
        "launch",
        "launch_tiled",
        "set_module_options",
        "get_module",
        "force_load",
        "load_module",
        "Tape",
        "clear_kernel_cache",
        "clear_lto_cache",
        "config",
        "environ",
        "putenv",
        "setdefault",
        "update",
        "rmtree",
        "Any",
        "Float",
        "Int",
        "Scalar",
    ]
)
BATCH_SIZE = 200  # files whose names are resolved in one libcst pass
_NOT_ITEMS = ("root", "library_roots", "files", "warnings", "schema_version")
_ITEM_LISTS = [f.name for f in fields(SourceIndex) if f.name not in _NOT_ITEMS]


def scan_repository(root: Path, *, library_roots: Sequence[Path] = ()) -> SourceIndex:
    """Index the Warp-related source of `root`; `library_roots` are read for context (`in_repo=False`).

    Never raises on bad input files: unreadable or unparsable ones become `warnings`.
    """
    root = Path(root).resolve()
    libraries = [Path(r).resolve() for r in library_roots]
    index = SourceIndex(root=root.as_posix(), library_roots=[r.as_posix() for r in libraries])
    repository = RootScanner(index, root, in_repo=True)
    repository.scan()
    for library_root in libraries:
        RootScanner(index, library_root, in_repo=False).scan()
    scripts, warnings = console_scripts(root, repository.module_files)
    index.entry_points += scripts
    index.warnings += warnings
    link_selectors(index)
    return index


@dataclass
class PreparedFile:
    """A parsed file waiting for its names to be resolved (resolution is batched across files)."""

    info: FileInfo
    text: str
    tree: ast.Module
    nodes: list[ast.AST]
    parents: dict[int, ast.AST]

    @classmethod
    def parse(cls, text: str, info: FileInfo) -> PreparedFile:
        tree = ast.parse(text)
        nodes, parents = walk_with_parents(tree)
        return cls(info, text, tree, nodes, parents)

    def name_request(self) -> NameRequest:
        imports = [n for n in self.nodes if isinstance(n, ast.Import | ast.ImportFrom)]
        return NameRequest(imports, _candidate_names(self.nodes, imports))

    def collect(self, resolver: NameResolver) -> SourceIndex:
        """Run every collector over the nodes, once."""
        parsed = ParsedFile(self.info, self.text, self.tree, resolver, self.nodes, self.parents)
        found = SourceIndex(root="")
        collectors = [collector(parsed, found) for collector in ALL_COLLECTORS]
        by_type: dict[type, list] = defaultdict(list)
        for collector in collectors:
            for node_type in collector.NODE_TYPES:
                by_type[node_type].append(collector)
        for node in self.nodes:
            for collector in by_type.get(type(node), ()):
                collector.visit(node)
        for collector in collectors:
            collector.finish()
        for name in _ITEM_LISTS:
            getattr(found, name).sort(key=lambda item: item.line or 0)
        return found


class RootScanner:
    """Scans one root (the repository, or one read-only library root) into a shared index."""

    def __init__(self, index: SourceIndex, root: Path, *, in_repo: bool) -> None:
        self.index = index
        self.root = root
        self.in_repo = in_repo
        self.project_names = discovery.top_level_module_names(root)
        self.module_files: dict[str, str] = {}

    def scan(self) -> None:
        batch: list[PreparedFile] = []
        for path in discovery.discover_python_files(self.root):
            prepared = self.prepare_file(path)
            if prepared is not None:
                batch.append(prepared)
            if len(batch) >= BATCH_SIZE:
                self._collect(batch)
                batch = []
        self._collect(batch)

    def prepare_file(self, path: Path) -> PreparedFile | None:
        """Read and `ast`-parse one file; None when it is skipped (prefilter, unreadable, unparsable)."""
        name = discovery.relative_posix(path, self.root) if self.in_repo else path.as_posix()
        module_name = discovery.python_module_name(path, self.root, bounded=self.in_repo)
        self.module_files.setdefault(module_name, name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.index.warnings.append(f"{name}: skipped, unreadable ({error.__class__.__name__}: {error})")
            return None
        mentions_warp = discovery.mentions_warp(text)
        if self.in_repo or mentions_warp:
            self.index.files.append(SourceFile(name, module_name, self.in_repo, mentions_warp))
        if self.in_repo:
            self._record_unparsed_entry_points(path, name, text, parsed=mentions_warp)
        if not mentions_warp:
            return None
        try:
            return PreparedFile.parse(text, FileInfo(name, module_name, self.in_repo, self.project_names))
        except (SyntaxError, ValueError) as error:
            where = f" line {error.lineno}" if isinstance(error, SyntaxError) and error.lineno else ""
            self.index.warnings.append(f"{name}: skipped, unparsable ({error.__class__.__name__}{where})")
        except RecursionError:
            self.index.warnings.append(f"{name}: skipped, nested too deeply to parse")
        return None

    def _collect(self, batch: list[PreparedFile]) -> None:
        if not batch:
            return
        resolvers = resolve_files([prepared.name_request() for prepared in batch])
        for prepared, resolver in zip(batch, resolvers, strict=True):
            try:
                found = prepared.collect(resolver)
            except Exception as error:  # noqa: BLE001 - one odd file must not stop the scan
                kind = error.__class__.__name__
                self.index.warnings.append(f"{prepared.info.file}: skipped, scan failed ({kind}: {error})")
                continue
            for item_list in _ITEM_LISTS:
                getattr(self.index, item_list).extend(getattr(found, item_list))

    def _record_unparsed_entry_points(self, path: Path, name: str, text: str, *, parsed: bool) -> None:
        """`__main__.py` files always; main guards of files the prefilter skips (parsed ones get theirs
        from MainGuardCollector)."""
        if path.name == "__main__.py":
            self.index.entry_points.append(EntryPoint(kind="main_module", file=name, line=1))
        line = None if parsed else main_guard_line(text)
        if line is not None:
            self.index.entry_points.append(EntryPoint(kind="main_guard", file=name, line=line))


def _warp_aliases(imports: list[ast.Import | ast.ImportFrom]) -> set[str]:
    """Local names of things imported from warp (`from warp import kernel as K` -> "K")."""
    aliases = set()
    for node in imports:
        from_warp = isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "warp"
        if isinstance(node, ast.ImportFrom) and from_warp and not node.level:
            aliases.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            aliases.update(a.asname for a in node.names if a.asname and a.name.startswith("warp."))
    return aliases


def _candidate_names(nodes: list[ast.AST], imports: list[ast.Import | ast.ImportFrom]) -> set[str]:
    """Dotted names that start with an imported name and end with an identifier an item can use
    (a Warp API, `os.environ`, a generic type); nothing else can be an item, so nothing else is resolved."""
    bound = _imported_names(imports)
    wanted = CANDIDATE_IDENTIFIERS | _warp_aliases(imports)
    names = set()
    for node in nodes:
        identifier = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        if identifier in wanted:
            dotted = dotted_name(node)
            if dotted and dotted.split(".", 1)[0] in bound:
                names.add(dotted)
    return names


def _imported_names(imports: list[ast.Import | ast.ImportFrom]) -> set[str]:
    """Local names the imports bind (`import a.b` binds "a")."""
    bound = set()
    for node in imports:
        for alias in node.names:
            if isinstance(node, ast.Import):
                bound.add(alias.asname or alias.name.split(".")[0])
            else:
                bound.add(alias.asname or alias.name)
    return bound
