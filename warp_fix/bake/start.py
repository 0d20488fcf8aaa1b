"""`warp-fix bake run`: once the restore has verified and placed everything, start the command.

A restore of its own is one more interpreter start and its imports: 55-90 ms, a tenth of a half-second warm
start. `python -m app ...` or `python app.py ...` on this very interpreter therefore runs here, as Python
itself would run it (`__main__`, `sys.argv`, `sys.path[0]`), and pays neither twice. Anything else (another
interpreter, interpreter options, a program that is not Python) replaces this process (`os.execvp`), as the
shell would have started it.

    python -m app --frames 3       -> PythonMain(module="app", args=("--frames", "3"))
    python examples/wave.py        -> PythonMain(script="examples/wave.py")
    python -u -m app, python3.12 -m app (another interpreter), pytest -x   -> None: exec'd
    python app_folder/, python app.pyz   -> exec'd too (the interpreter runs their __main__)
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

from warp_fix.bake.errors import BakeError


@dataclass(frozen=True)
class PythonMain:
    """What `python -m MODULE ARGS` or `python SCRIPT ARGS` runs, when `python` is this interpreter."""

    module: str | None = None
    script: str | None = None
    args: tuple[str, ...] = ()

    @classmethod
    def of(cls, command: list[str], executable: str = sys.executable) -> PythonMain | None:
        """None unless the program is this interpreter and the rest is a module or a script with its arguments."""
        program = shutil.which(command[0]) if command else None
        if program is None or not _same_interpreter(program, executable) or len(command) < 2:
            return None
        first, rest = command[1], command[2:]
        if first == "-m" and rest and not rest[0].startswith("-"):
            return cls(module=rest[0], args=tuple(rest[1:]))
        if not first.startswith("-"):
            return cls(script=first, args=tuple(rest))
        return None

    def run(self) -> None:
        """As the interpreter runs it: `__name__`, `__file__`, `sys.argv`, and `sys.path[0]` the current directory
        for a module, the script's own directory for a script; exceptions and `SystemExit` go up unchanged."""
        import runpy

        if self.module is not None:
            sys.argv = [self.module, *self.args]  # runpy puts the module's file in argv[0], as `-m` does
            sys.path[:] = _search_path(os.getcwd())
            problem = _not_runnable(self.module)
            if problem:  # Python's own line and exit code, not a traceback through warp-fix
                print(f"{sys.executable}: {problem}", file=sys.stderr)
                raise SystemExit(1)
            runpy.run_module(self.module, run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(str(self.script))  # `__file__` is absolute, as Python makes it
            sys.argv = [script, *self.args]  # the one difference: Python keeps argv[0] as typed
            sys.path[:] = _search_path(os.path.dirname(script))
            runpy.run_path(script, run_name="__main__")


def _not_runnable(module: str) -> str | None:
    """What `python -m` says of a module it cannot run (its parent packages are imported, as `-m` does)."""
    from importlib.util import find_spec

    try:
        spec = find_spec(module)
    except ImportError:
        spec = None
    if spec is None:
        return f"No module named {module}"
    if spec.submodule_search_locations is not None and find_spec(f"{module}.__main__") is None:
        return f"No module named {module}.__main__; '{module}' is a package and cannot be directly executed"
    return None


def _plain_file(path: str) -> bool:
    """A script file: a folder or a zip application is left to the interpreter itself (exec)."""
    import zipfile

    return os.path.isfile(path) and not zipfile.is_zipfile(path)


def _search_path(first: str) -> list[str]:
    """`sys.path` as the app's start makes it: its first entry replaces warp-fix's own (the folder of the
    `warp-fix` script, or the current one), except under PYTHONSAFEPATH, where Python adds none."""
    return list(sys.path) if sys.flags.safe_path else [first, *sys.path[1:]]


def _same_interpreter(program: str, executable: str) -> bool:
    """The same file by another name of the same folder (`python`, `python3` of one venv); a venv's python and
    the system one it links to are not the same: their site-packages differ."""
    program, executable = os.path.abspath(program), os.path.abspath(executable)
    return os.path.dirname(program) == os.path.dirname(executable) and os.path.realpath(program) == os.path.realpath(
        executable
    )


def startable(command: list[str]) -> None:
    """Checked before the restore writes anything: a command that cannot start is refused first."""
    if not command:
        raise BakeError("no command given: put it after --, e.g. warp-fix bake run ARCHIVE -- python -m app")
    if shutil.which(command[0]) is None:
        raise BakeError(f"command not found: {command[0]}")
    main = PythonMain.of(command)
    if main is not None and main.script is not None and not os.path.exists(main.script):
        raise BakeError(f"cannot open {main.script}: no such file")
    if main is not None and main.module is not None and not _findable(main.module):
        raise BakeError(f"no module named {main.module.split('.')[0]} (from {os.getcwd()})")


def _findable(module: str) -> bool:
    """The top-level package, looked up where `-m` looks, without importing anything."""
    from importlib.machinery import PathFinder

    top = module.split(".")[0]
    return top in sys.builtin_module_names or PathFinder.find_spec(top, _search_path(os.getcwd())) is not None


def start(command: list[str]) -> int:
    """Run `command` here when it is this interpreter's Python, else become it. Returns only in the first case:
    0 when the program ends normally (its `sys.exit` and exceptions pass through unchanged)."""
    main = PythonMain.of(command)
    if main is None or (main.script is not None and not _plain_file(main.script)):
        sys.stdout.flush()
        sys.stderr.flush()
        os.execvp(command[0], command)
    _out_of_the_app_s_collections()
    main.run()
    return 0


def _out_of_the_app_s_collections() -> None:
    """warp-fix's own objects (parser, manifest, archive reader) stay alive under the app; frozen, the app's
    garbage collections never walk them (`bake run` of a CUDA app: 1.09x its warm start without this, 1.01x
    with it; docs/bake.md). The interpreter's start-up objects are frozen with them, which a plain start does
    not do: the benchmark times the same start without the restore to show what that alone is worth."""
    import gc

    gc.collect()
    gc.freeze()
