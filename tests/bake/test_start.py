"""Which commands `bake run` starts in its own process, and which it hands to exec."""

from __future__ import annotations

import os
import re
import sys

import pytest

from warp_fix.bake.errors import BakeError
from warp_fix.bake.start import PythonMain, startable

PYTHON = sys.executable


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ([PYTHON, "-m", "app", "--frames", "3"], PythonMain(module="app", args=("--frames", "3"))),
        ([PYTHON, "-m", "app.sim"], PythonMain(module="app.sim")),
        ([PYTHON, "examples/wave.py", "-n", "2"], PythonMain(script="examples/wave.py", args=("-n", "2"))),
    ],
)
def test_this_interpreter_with_a_module_or_a_script_runs_here(command, expected):
    assert PythonMain.of(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        [PYTHON, "-u", "-m", "app"],  # interpreter options: only a real start honours them all
        [PYTHON, "-c", "print(1)"],
        [PYTHON, "-m"],
        [PYTHON],
        ["sh", "-c", "python -m app"],
        ["no-such-program-here", "-m", "app"],
    ],
)
def test_anything_else_is_exec_d(command):
    assert PythonMain.of(command) is None


def test_a_link_to_this_interpreter_from_another_folder_is_another_interpreter(tmp_path):
    """A venv's python links to the system one; their site-packages differ, so the folder must match too."""
    link = tmp_path / "python"
    link.symlink_to(PYTHON)
    assert PythonMain.of([str(link), "-m", "app"]) is None
    assert PythonMain.of([PYTHON, "-m", "app"], executable=str(link)) is None


def test_another_name_in_this_interpreter_s_folder_is_this_interpreter(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    real = folder / "python3.11"
    real.symlink_to(PYTHON)
    (folder / "python").symlink_to(real)
    assert PythonMain.of([str(folder / "python"), "-m", "app"], executable=str(real)) == PythonMain(module="app")


def test_a_command_that_cannot_start_is_refused_before_the_restore(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "present.py").write_text("")
    startable([PYTHON, "present.py"])
    startable([PYTHON, "-m", "present"])
    for command, message in [
        ([], "no command given"),
        (["no-such-program-here"], "command not found: no-such-program-here"),
        ([PYTHON, "absent.py"], "cannot open absent.py"),
        ([PYTHON, "-m", "absent.sub"], f"no module named absent (from {os.getcwd()})"),
    ]:
        with pytest.raises(BakeError, match=re.escape(message)):
            startable(command)
