"""The layout family: where things sit in the repository, the program's code and what it runs unchanged."""

from __future__ import annotations

import sys
from pathlib import PurePosixPath

from tests.variants.transform import Example, Fixture, LineMap, Skip, Transformation, Variant

SITE_PACKAGES = f".venv/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


class InRepoVirtualenv(Transformation):
    """A `.venv` inside the repository with a copy of the project's own package installed in it (as `pip install
    .` leaves one). The command runs the checkout's package (the current directory comes first on sys.path), so
    the copy never runs: it is code of the repository's folder that is not the project's."""

    NAME = "in-repo-venv"
    FAMILY = "layout"
    DESCRIPTION = "A `.venv/` in the repository holds an installed copy of the project's package."
    EXAMPLES = (
        Example(
            path="pkg/sim.py",
            before="import warp as wp\n",
            after="import warp as wp\n",  # the project's files are unchanged; the copy is new
            added=(".venv/pyvenv.cfg", f"{SITE_PACKAGES}/pkg/sim.py"),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if fixture.command[1] != "-m":
            return Skip("a script's folder, not the repository's, is first on sys.path: a copy could be imported")
        if (fixture.root / ".venv").exists():
            return Skip("the fixture has a .venv already")
        return None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        package = fixture.command[2].split(".")[0]
        copies = {
            f"{SITE_PACKAGES}/{path}": text
            for path, text in fixture.sources.items()
            if PurePosixPath(path).parts[0] == package
        }
        config = f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {sys.version.split()[0]}\n"
        installed = {".venv/pyvenv.cfg": config, **copies}
        files = {**fixture.sources, **installed}
        return Variant(
            fixture,
            self.NAME,
            files,
            origin={path: path for path in fixture.sources},
            line_maps={path: LineMap.between(text, text) for path, text in fixture.sources.items()},
        )


class SrcLayout(Transformation):
    """The package moves under `src/`, as a project laid out for packaging has it; the run finds it on
    PYTHONPATH, where installing the project (editable or not) would put it. Module names do not change."""

    NAME = "src-layout"
    FAMILY = "layout"
    DESCRIPTION = "The package `pkg/` moves to `src/pkg/`; `src` is on the run's PYTHONPATH."
    EXAMPLES = (
        Example(
            path="pkg/__main__.py",
            before="from pkg.sim import step\n\nstep()\n",
            after="from pkg.sim import step\n\nstep()\n",  # the files are the same, in another place
            others=(("pkg/sim.py", "def step():\n    pass\n"),),
            added=("src/pkg/__main__.py", "src/pkg/sim.py"),
        ),
    )

    def precondition(self, fixture: Fixture) -> Skip | None:
        if fixture.command[1] != "-m":
            return Skip("the command runs a script by its path")
        if any(PurePosixPath(path).parts[0] == "src" for path in fixture.every_python_file):
            return Skip("the fixture has a src/ folder already")
        return None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        skip = self.precondition(fixture)
        if skip is not None:
            return skip
        package = fixture.command[2].split(".")[0]
        moved = {path: f"src/{path}" if PurePosixPath(path).parts[0] == package else path for path in fixture.sources}
        return Variant(
            fixture,
            self.NAME,
            files={moved[path]: text for path, text in fixture.sources.items()},
            origin={new: old for old, new in moved.items()},
            line_maps={moved[path]: LineMap.between(text, text) for path, text in fixture.sources.items()},
            python_path=("src",),
        )
