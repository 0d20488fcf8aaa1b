"""Every mechanism over one set of scope situations: the same verdict from each.

Each mechanism's own EXAMPLES that propose an edit are moved, unchanged otherwise, to where the code would sit in
a situation (every file the run and the scan name goes under one folder, or outside the repository): the
project's own code in a `src/` layout or a private folder keeps the example's fixes; an installed package inside
the repository's `.venv/`, on a path outside the repository or vendored, Warp's own tree, a file carrying the
generated marker and a protected path get no edit from any mechanism, and a fix left to them (a process-wide
setting at the project's entry point) needs consent at most. The index keeps those files as if the scan had read
them as the repository's: the scope, not the scan's skip list, must hold the line.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from warp_fix.mechanisms import MECHANISMS, Inputs
from warp_fix.model import FIRED, Fix, NotProposed, Safety
from warp_fix.ownership import Owner
from warp_fix.plan import within_scope
from warp_fix.scope import Scope

FILE_FIELDS = frozenset({"file", "picked_by_file", "main_file"})
FILE_LISTS = frozenset({"source_files", "first_build_files"})


@dataclass(frozen=True)
class Situation:
    """Where the example's code is moved: `folder` under the repository root, or an absolute folder outside it."""

    name: str
    folder: str
    owner: Owner
    marker: bool = False  # the files carry the generated-code marker
    protected: tuple[str, ...] = ()

    @property
    def outside(self) -> bool:
        return self.folder.startswith("/")


SITUATIONS = (
    Situation("src layout", "src", Owner.PROJECT),
    Situation("a private folder of the package", "pkg/_src", Owner.PROJECT),
    Situation("an installed package in the repository's .venv", ".venv/lib/python3.11/site-packages", Owner.INSTALLED),
    Situation("a conda environment in the repository", "envs/sim/lib/python3.11/site-packages", Owner.INSTALLED),
    Situation("a package on PYTHONPATH outside the repository", "/opt/site", Owner.INSTALLED),
    Situation("a vendored copy", "third_party/lib", Owner.INSTALLED),
    Situation("Warp's own tree", "/opt/warp-src/warp/_src", Owner.WARP),
    Situation("a file carrying the generated marker", "gen", Owner.GENERATED, marker=True),
    Situation("a protected folder", "legacy", Owner.MAINTENANCE, protected=("legacy/",)),
)

EDITING_EXAMPLES = [
    (mechanism, example)
    for mechanism in MECHANISMS
    for example in mechanism.EXAMPLES
    if example.status == FIRED and example.fixes and any(codemod for codemod, _ in example.fixes)
]


def test_every_mechanism_that_edits_has_an_example_in_the_table():
    edits = {mechanism.SLUG for mechanism in MECHANISMS if any(codemod for codemod in mechanism.CODEMODS)}
    assert edits <= {mechanism.SLUG for mechanism, _ in EDITING_EXAMPLES}


@pytest.mark.parametrize("situation", SITUATIONS, ids=lambda s: s.name)
@pytest.mark.parametrize(
    ("mechanism", "example"), EDITING_EXAMPLES, ids=[f"{m.SLUG}:{e.title}" for m, e in EDITING_EXAMPLES]
)
def test_the_same_verdict_from_every_mechanism(mechanism, example, situation, tmp_path):
    inputs = moved(example.inputs, situation, tmp_path)
    finding = mechanism.diagnose(inputs)
    proposals = [within_scope(p, inputs.scope) for p in mechanism.propose(finding, inputs)] if finding.facts else []
    fixes = [p for p in proposals if isinstance(p, Fix)]
    if situation.owner is Owner.PROJECT:
        assert finding.status == FIRED, finding.reason
        assert [(f.codemod, f.safety) for f in fixes] == list(example.fixes)
        assert all(file.startswith(situation.folder + "/") for f in fixes for file in f.files)
        return
    moved_files = [file for f in fixes for file in f.files if inside(file, situation)]
    assert moved_files == [], f"{situation.name}: {mechanism.SLUG} edits {moved_files}"
    assert all(Safety(f.safety).rank <= Safety.CONSENT.rank for f in fixes if f.codemod)
    if finding.status == FIRED and not fixes:
        assert [p for p in proposals if isinstance(p, NotProposed)], "a fired finding says why nothing is proposed"


def inside(file: str, situation: Situation) -> bool:
    return file.startswith(situation.folder + "/") or file.startswith(situation.folder.lstrip("/"))


def moved(inputs: Inputs, situation: Situation, root: Path) -> Inputs:
    """The example's report and index with every file under `situation.folder`, the repository at `root`."""
    report, index = copy.deepcopy(inputs.report), copy.deepcopy(inputs.index)
    report.cwd, index.root = str(root), str(root)
    files: set[str] = set()

    def place(file: str) -> str:
        if not file or file.startswith("<") or file.startswith("/"):
            return file
        files.add(file)
        return f"{situation.folder}/{file}"

    for item in walk(report):
        relocate(item, place)
    for item in walk(index):
        relocate(item, place)
        if situation.outside and hasattr(item, "in_repo"):
            item.in_repo = False
    for file in files:
        path = Path(situation.folder) / file if situation.outside else root / situation.folder / file
        if not situation.outside:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# @generated by a tool\n" if situation.marker else "import warp as wp\n")
    if not situation.outside and situation.folder.startswith(".venv"):
        (root / ".venv").mkdir(exist_ok=True)
        (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    if situation.folder.startswith("envs/"):
        (root / "envs" / "sim" / "conda-meta").mkdir(parents=True, exist_ok=True)
    return Inputs(report, index, Scope(report, index, situation.protected))


def walk(value, seen=None):
    """Every dataclass instance reachable from `value`."""
    seen = seen if seen is not None else set()
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from walk(getattr(value, f.name), seen)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from walk(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            yield from walk(item, seen)


def relocate(item, place) -> None:
    for f in dataclasses.fields(item):
        value = getattr(item, f.name)
        if f.name in FILE_FIELDS and isinstance(value, str):
            new = place(value)
        elif f.name == "stack" and isinstance(value, tuple):  # a Site's outer frames, "file:line:function"
            new = tuple(":".join([place(frame.rsplit(":", 2)[0]), *frame.rsplit(":", 2)[1:]]) for frame in value)
        elif f.name in FILE_LISTS and isinstance(value, list):
            new = [place(v) for v in value]
        else:
            continue
        object.__setattr__(item, f.name, new)
