"""A transformation rewrites a fixture into a program that does the same, written differently.

Each one checks its own precondition on the fixture (and says why it skips one), rewrites the files it applies to
and returns a `Variant`: the files as they now read, and how each variant line maps back to the original's, so a
plan of the variant can be compared with the plan of the fixture in the fixture's own coordinates.
"""

from __future__ import annotations

import difflib
import io
import shlex
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import libcst as cst

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# Folders of a fixture no transformation rewrites: its own tests, and packages it uses as installed ones.
UNTOUCHED = ("tests", "vendor")


@dataclass(frozen=True)
class Fixture:
    """A fixture's Python sources (repository-relative path -> text) and the command of its [tool.warp-fix]."""

    name: str
    root: Path
    sources: dict[str, str]  # the files transformations rewrite
    command: tuple[str, ...]
    untouched: dict[str, str] = field(default_factory=dict)  # its tests and vendored packages: read, not rewritten
    config: dict[str, str | list[str]] = field(default_factory=dict)  # its [tool.warp-fix] table

    @classmethod
    def load(cls, root: Path) -> Fixture:
        config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["warp-fix"]
        command = shlex.split(config["command"]) if isinstance(config["command"], str) else config["command"]
        files = {
            path.relative_to(root).as_posix(): path.read_text()
            for path in sorted(root.rglob("*.py"))
            if "__pycache__" not in path.parts and "build" not in path.relative_to(root).parts
        }
        sources = {path: text for path, text in files.items() if Path(path).parts[0] not in UNTOUCHED}
        untouched = {path: text for path, text in files.items() if path not in sources}
        return cls(root.name, root, sources, tuple(command), untouched, config)

    @property
    def every_python_file(self) -> dict[str, str]:
        """Its sources and the files no transformation rewrites, which still read the sources' names."""
        return {**self.untouched, **self.sources}

    @classmethod
    def of_text(cls, sources: dict[str, str], name: str = "example") -> Fixture:
        """A fixture made of the given files only: a transformation's examples."""
        return cls(name, Path(name), dict(sources), ("python", "-m", name))

    @property
    def packages(self) -> set[str]:
        """The top-level names the project's own code imports itself by."""
        return {Path(path).parts[0].removesuffix(".py") for path in self.sources}


@dataclass(frozen=True)
class Skip:
    """A transformation does not apply to a fixture; `reason` says which precondition failed."""

    reason: str


@dataclass
class LineMap:
    """Variant line -> original line of one file (None: a line the transformation wrote)."""

    lines: dict[int, int | None] = field(default_factory=dict)

    @classmethod
    def between(cls, original: str, variant: str) -> LineMap:
        """Lines matched by a diff of their code without indentation and comments (a block moved into a `case`,
        a line that lost its comment, is the same code); a line left over whose code occurs once on each side
        matches that one (an import moved up); a changed block of as many lines on both sides maps line by line."""
        before, after = _code_lines(original), _code_lines(variant)
        mapped: dict[int, int | None] = {}
        matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
        for tag, a0, a1, b0, b1 in matcher.get_opcodes():
            if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
                mapped.update({b0 + k + 1: a0 + k + 1 for k in range(b1 - b0)})
        taken = {line for line in mapped.values() if line is not None}
        left_before = [n for n in range(1, len(before) + 1) if n not in taken]
        left_after = [n for n in range(1, len(after) + 1) if n not in mapped]
        count_before = Counter(before[n - 1] for n in left_before)
        count_after = Counter(after[n - 1] for n in left_after)
        where = {before[n - 1]: n for n in left_before}
        for n in left_after:
            text = after[n - 1]
            unique = text and count_before[text] == 1 and count_after[text] == 1
            mapped[n] = where[text] if unique else None
        return cls(mapped)

    def original(self, line: int) -> int | None:
        return self.lines.get(line)


def _code_lines(text: str) -> list[str]:
    """Each line's code: without its indentation and its comment (a `#` inside a string stays)."""
    lines = text.splitlines()
    try:
        comments = [t.start for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        comments = []
    for row, column in comments:
        lines[row - 1] = lines[row - 1][:column]
    return [line.strip() for line in lines]


@dataclass
class Variant:
    """A fixture rewritten: every file as the variant has it, and for each variant path its original path and
    line map (a file the transformation added has none)."""

    fixture: Fixture
    transformation: str
    files: dict[str, str]  # variant path -> text: the sources and any file it adds (the rest is copied as it is)
    origin: dict[str, str]  # variant path -> original path
    line_maps: dict[str, LineMap]  # variant path -> its map
    # folders of the variant the program's imports need on PYTHONPATH (as installing the project puts them there)
    python_path: tuple[str, ...] = ()
    # how the plan may name a thing the transformation renamed -> how it names it in the original
    names: dict[str, str] = field(default_factory=dict)

    def original_place(self, path: str, line: int | None) -> tuple[str, int | None | str]:
        """(original path, original line) of a variant place; an unmapped line reads `?<line>`."""
        source = self.origin.get(path, path)
        if line is None:
            return source, None
        line_map = self.line_maps.get(path)
        if line_map is None:
            return source, line
        found = line_map.original(line)
        return source, found if found is not None else f"?{line}"


@dataclass(frozen=True)
class Example:
    """One file before and after the transformation (checked by tests/variants/test_transformations.py)."""

    before: str
    after: str
    path: str = "example/sim.py"
    others: tuple[tuple[str, str], ...] = ()  # (path, text) of the other files of the example's project
    added: tuple[str, ...] = ()  # files the variant has that the project had not

    @property
    def fixture(self) -> Fixture:
        return Fixture.of_text({**dict(self.others), self.path: self.before}, Path(self.path).parts[0])


class Transformation:
    """Rewrites a fixture's files where it preserves what the program does.

    Subclasses set NAME, FAMILY, DESCRIPTION and EXAMPLES, and implement `rewrite` (one file's module, or None
    where that file has nothing to rewrite) and, where the whole fixture must meet a condition, `precondition`.
    """

    NAME: ClassVar[str]
    FAMILY: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    EXAMPLES: ClassVar[tuple[Example, ...]] = ()
    # The reason given when no file of a fixture has anything this transformation rewrites.
    NOTHING_TO_REWRITE: ClassVar[str] = "no file has what it rewrites"

    def precondition(self, fixture: Fixture) -> Skip | None:
        """A reason the fixture as a whole cannot take this transformation without changing behaviour."""
        return None

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        raise NotImplementedError

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        files: dict[str, str] = {}
        changed = False
        for path, text in fixture.sources.items():
            new = self.rewrite(path, cst.parse_module(text), fixture)
            new_text = new.code if new is not None else text
            files[path] = new_text
            changed |= new_text != text
        if not changed:
            return Skip(self.NOTHING_TO_REWRITE)
        return Variant(
            fixture,
            self.NAME,
            files,
            origin={path: path for path in files},
            line_maps={path: LineMap.between(fixture.sources[path], files[path]) for path in files},
        )

    def rewrite_example(self, example: Example) -> str:
        """An example's file rewritten (beside its other files): unchanged where nothing applies."""
        result = self.apply(example.fixture)
        if isinstance(result, Skip):
            return example.before
        return next(result.files[path] for path, origin in result.origin.items() if origin == example.path)
