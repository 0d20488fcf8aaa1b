"""Walk a repository, parse the files that mention Warp, and feed every collector in one tree walk.

Python's `ast` does the walking (exact lines, fast); each file's imports resolve the dotted names
the collectors ask about (`names.py`), and `symtable` the scopes of kernel factories (`captures.py`).
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
import multiprocessing.context
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import files as discovery
from .collectors import ALL_COLLECTORS
from .collectors.entry_points import console_scripts, main_guard_line
from .collectors.kernels import link_selectors
from .collectors.values import ValueReadCollector
from .facts import ITEM_LISTS, FactsAssembler, FileFacts
from .index import EntryPoint, ModuleName, SourceFile, SourceIndex, ValueRead
from .kept import KeptIndex
from .names import NameRequest, NameResolver, dotted_name, resolve_files, top_level_names
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
# Files are parsed and collected in batches of up to this many files or characters of text, each batch by one worker
# (their syntax trees are what the scan's memory holds; a batch of 200 large files was half a gigabyte).
BATCH_FILES = 200
BATCH_CHARACTERS = 2_000_000
# Worker processes at most: each holds one batch's syntax trees while it scans.
MAX_WORKERS = 4


def scan_repository(
    root: Path, *, library_roots: Sequence[Path] = (), kept: KeptIndex | None = None, workers: int | None = None
) -> SourceIndex:
    """Index the Warp-related source of `root`; `library_roots` are read for context (`in_repo=False`).

    With `kept`, a file whose text and place match a kept entry is not parsed again, and this scan's facts are
    saved for the next one. `workers`: processes that may scan batches (default: the machine's cores, at most
    MAX_WORKERS). Never raises on bad input files: unreadable or unparsable ones become `warnings`.
    """
    root = Path(root).resolve()
    libraries = [Path(r).resolve() for r in library_roots]
    index = SourceIndex(root=root.as_posix(), library_roots=[r.as_posix() for r in libraries])
    assembler = FactsAssembler(index)
    workers = BatchWorkers(workers) if workers is not None else BatchWorkers.for_machine()
    repository = RootScanner(root, in_repo=True, kept=kept, workers=workers)
    try:
        for scanner in [repository, *(RootScanner(r, in_repo=False, kept=kept, workers=workers) for r in libraries)]:
            for facts in scanner.scan():
                assembler.add(facts)
            assembler.flush()
    finally:
        workers.close()
    scripts, warnings = console_scripts(root, repository.module_files)
    index.entry_points += scripts
    index.warnings += warnings
    link_selectors(index)
    if kept is not None:
        kept.save()
    return index


@dataclass(frozen=True)
class ParseJob:
    """A file that mentions Warp, to be parsed and collected (in this process or a worker)."""

    text: str
    info: FileInfo


@dataclass
class ParseOutcome:
    """What parsing and collecting one file gave: its items, or the warnings that say why not."""

    parsed: bool = False
    warnings: list[str] = field(default_factory=list)
    items: SourceIndex | None = None
    collect_warnings: list[str] = field(default_factory=list)
    names: list[ModuleName] = field(default_factory=list)

    def fill(self, facts: FileFacts) -> None:
        facts.parsed = self.parsed
        facts.warnings += self.warnings
        facts.items = self.items
        facts.collect_warnings += self.collect_warnings
        if facts.listed is not None and facts.listed.in_repo:
            facts.listed.names = self.names


def scan_batch(jobs: list[ParseJob]) -> list[ParseOutcome]:
    """Parse a batch of files, resolve their names, and run the collectors over each; the syntax trees live only
    while the batch does. A module-level function, so a worker process can run it."""
    outcomes = [ParseOutcome() for _ in jobs]
    prepared: list[tuple[PreparedFile, ParseOutcome]] = []
    with _collections_between_batches():
        for job, outcome in zip(jobs, outcomes, strict=True):
            file = _parse(job, outcome)
            if file is not None:
                prepared.append((file, outcome))
        resolvers = resolve_files([file.name_request() for file, _ in prepared])
        for (file, outcome), resolver in zip(prepared, resolvers, strict=True):
            try:
                outcome.names = file.top_level_names()
                outcome.items = file.collect(resolver)
            except Exception as error:  # noqa: BLE001 - one odd file must not stop the scan
                kind = error.__class__.__name__
                outcome.collect_warnings.append(f"{file.info.file}: skipped, scan failed ({kind}: {error})")
        prepared.clear()
        gc.collect(0)  # what this batch left: the young objects alone, not the whole heap again
    return outcomes


def _parse(job: ParseJob, outcome: ParseOutcome) -> PreparedFile | None:
    try:
        prepared = PreparedFile.parse(job.text, job.info)
    except (SyntaxError, ValueError) as error:
        where = f" line {error.lineno}" if isinstance(error, SyntaxError) and error.lineno else ""
        outcome.warnings.append(f"{job.info.file}: skipped, unparsable ({error.__class__.__name__}{where})")
        return None
    except RecursionError:
        outcome.warnings.append(f"{job.info.file}: skipped, nested too deeply to parse")
        return None
    outcome.parsed = True
    return prepared


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

    def top_level_names(self) -> list[ModuleName]:
        return top_level_names(self.tree, self.info.python_module, self.info.file.endswith("__init__.py"))

    def name_request(self) -> NameRequest:
        imports = [n for n in self.nodes if type(n) is ast.Import or type(n) is ast.ImportFrom]
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
        for name in ITEM_LISTS:
            getattr(found, name).sort(key=lambda item: item.line or 0)
        return found


class RootScanner:
    """Scans one root (the repository, or one read-only library root) into one FileFacts per file."""

    def __init__(
        self, root: Path, *, in_repo: bool, kept: KeptIndex | None = None, workers: BatchWorkers | None = None
    ) -> None:
        self.root = root
        self.in_repo = in_repo
        self.kept = kept
        self.workers = workers or BatchWorkers(1)
        self.project_names = discovery.top_level_module_names(root)
        self.context = f"{in_repo}\0{','.join(sorted(self.project_names))}"
        self.module_files: dict[str, str] = {}

    def scan(self) -> list[FileFacts]:
        """Every file's facts, in discovery order. Files to parse go in batches, scanned here or by worker
        processes; each file's outcome fills its facts in discovery order."""
        found: list[FileFacts] = []
        batch: list[tuple[ParseJob, FileFacts, str | None]] = []
        pending: list[tuple[list[tuple[ParseJob, FileFacts, str | None]], _Batch]] = []
        for path in discovery.discover_python_files(self.root):
            facts, job, key = self.read_file(path)
            found.append(facts)
            if job is not None:
                batch.append((job, facts, key))
            if len(batch) >= BATCH_FILES or sum(len(job.text) for job, _, _ in batch) >= BATCH_CHARACTERS:
                pending.append((batch, self.workers.submit([job for job, _, _ in batch])))
                batch = []
        if batch:
            pending.append((batch, self.workers.submit([job for job, _, _ in batch])))
        for entries, scanned in pending:
            for (_, facts, key), outcome in zip(entries, scanned.outcomes(), strict=True):
                outcome.fill(facts)
                self._keep(key, facts)
        return found

    def read_file(self, path: Path) -> tuple[FileFacts, ParseJob | None, str | None]:
        """Read one file: its kept facts when the store has them; else what reading gives, the ParseJob still to
        run when it mentions Warp, and the key its facts are kept under."""
        name = discovery.relative_posix(path, self.root) if self.in_repo else path.as_posix()
        module_name = discovery.python_module_name(path, self.root, bounded=self.in_repo)
        self.module_files.setdefault(module_name, name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            unreadable = f"{name}: skipped, unreadable ({error.__class__.__name__}: {error})"
            return FileFacts(warnings=[unreadable]), None, None
        key = self.kept.key(text, f"{name}\0{module_name}\0{self.context}") if self.kept is not None else None
        if self.kept is not None and key is not None:
            reused = self.kept.take(key)
            if reused is not None:
                return reused, None, None
        mentions_warp = discovery.mentions_warp(text)
        facts = FileFacts()
        if self.in_repo or mentions_warp:
            imports = discovery.imported_modules(text) if self.in_repo and not mentions_warp else []
            facts.listed = SourceFile(name, module_name, self.in_repo, mentions_warp, imports)
            if self.in_repo and not mentions_warp:  # a re-export (`pkg/__init__.py`) may name no Warp at all,
                # a registry (`TABLE = {2: gather_2d}`) may read kernels as values
                info = FileInfo(name, module_name, self.in_repo, self.project_names)
                facts.listed.names, facts.value_reads = _names_and_reads_of(text, info)
        if self.in_repo:
            facts.entry_points = _unparsed_entry_points(path, name, text, parsed=mentions_warp)
        if not mentions_warp:
            self._keep(key, facts)
            return facts, None, key
        return facts, ParseJob(text, FileInfo(name, module_name, self.in_repo, self.project_names)), key

    def _keep(self, key: str | None, facts: FileFacts) -> None:
        if self.kept is not None and key is not None:
            self.kept.keep(key, facts)


class BatchWorkers:
    """Runs `scan_batch` in this process, or, once a tree proves larger than one batch, in worker processes.

    A project of one batch never pays a pool's start; a large library's batches are spread over the machine's cores
    (on 2 cores the cold scan of a physics library took about half the time). Outcomes are read in submission
    order, so the index is the one a scan in one process gives. A pool that cannot start or breaks leaves its
    batches to this process.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._batches: list[_Batch] = []
        self._pool: ProcessPoolExecutor | None = None

    @classmethod
    def for_machine(cls) -> BatchWorkers:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            cores = os.cpu_count() or 1
        return cls(min(cores, MAX_WORKERS))

    def submit(self, jobs: list[ParseJob]) -> _Batch:
        batch = _Batch(jobs)
        self._batches.append(batch)
        if self.count > 1 and len(self._batches) > 1 and self._start_pool():
            for waiting in self._batches:
                if waiting.future is None:
                    waiting.future = self._pool.submit(scan_batch, waiting.jobs)  # type: ignore[union-attr]
        return batch

    def _start_pool(self) -> bool:
        if self._pool is None:
            try:
                self._pool = ProcessPoolExecutor(self.count, mp_context=_start_method())
            except (OSError, ValueError):
                self.count = 1
                return False
        return True

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        self._batches = []


class _Batch:
    """Files to scan together; scanned by a worker when one took it, else here when its outcomes are read."""

    def __init__(self, jobs: list[ParseJob]) -> None:
        self.jobs = jobs
        self.future: Future[list[ParseOutcome]] | None = None

    def outcomes(self) -> list[ParseOutcome]:
        if self.future is not None:
            try:
                return self.future.result()
            except (BrokenProcessPool, OSError, MemoryError):
                pass  # the worker died (killed for memory, say): this process scans the batch
        return scan_batch(self.jobs)


def _start_method() -> multiprocessing.context.BaseContext:
    """Fork where the platform has it (a worker starts in milliseconds with the scanner already imported); spawn
    elsewhere."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


@contextmanager
def _collections_between_batches() -> Iterator[None]:
    """Python's cyclic collector off while files are parsed, and run once after each batch instead: with a batch's
    syntax trees alive, its automatic full collections re-walked them again and again (about 30 % of the scan's
    CPU time on a large library)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _unparsed_entry_points(path: Path, name: str, text: str, *, parsed: bool) -> list[EntryPoint]:
    """`__main__.py` files always; main guards of files the prefilter skips (parsed ones get theirs from
    MainGuardCollector)."""
    found = []
    if path.name == "__main__.py":
        found.append(EntryPoint(kind="main_module", file=name, line=1))
    line = None if parsed else main_guard_line(text)
    if line is not None:
        found.append(EntryPoint(kind="main_guard", file=name, line=line))
    return found


def _names_and_reads_of(text: str, info: FileInfo) -> tuple[list[ModuleName], list[ValueRead]]:
    """The top-level names and value reads of a file the prefilter skips: a parse of its own, none when it does
    not parse (it names no Warp: nothing resolves to Warp, nothing is a launch)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return [], []
    parsed = ParsedFile(info, text, tree, NameResolver(), *walk_with_parents(tree))
    found = SourceIndex(root="")
    reads = ValueReadCollector(parsed, found)
    for node in parsed.nodes:
        if type(node) in ValueReadCollector.NODE_TYPES:
            reads.visit(node)
    reads.finish()
    return parsed.top_level_names(), found.value_reads


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
        kind = type(node)
        identifier = node.attr if kind is ast.Attribute else node.id if kind is ast.Name else None  # type: ignore[attr-defined]
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
