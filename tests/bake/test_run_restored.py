"""`warp-fix bake run ARCHIVE -- COMMAND`: the restore and the start as one step, started as a CI step or an
entrypoint would (a process of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.bake.conftest import repack, tree

pytestmark = pytest.mark.slow

SHOW = """
import gc, json, sys
print(json.dumps({
    "name": __name__,
    "file": __file__,
    "argv": sys.argv,
    "path0": sys.path[0],
    "here": "warp_fix.bake.start" in sys.modules,
    "frozen": gc.get_freeze_count(),
}))
"""


def bake_run(archive, cache, command, cwd, state, warp_fix=(sys.executable, "-m", "warp_fix"), **env):
    return subprocess.run(
        [*warp_fix, "bake", "run", str(archive), "--cache", str(cache), "--", *command],
        cwd=cwd, capture_output=True, text=True, env={**_env(state), **env},
    )


def _env(state):
    import os

    return {**os.environ, "WARP_FIX_STATE_DIR": str(state)}


def test_the_app_runs_on_the_restored_entries_and_compiles_nothing(baked, tiny_app, tmp_path):
    restored_alone = tmp_path / "alone"
    subprocess.run(
        [sys.executable, "-m", "warp_fix", "bake", "restore", str(baked.archive), "--cache", str(restored_alone)],
        check=True, capture_output=True, env=_env(tmp_path / "state"),
    )
    done = bake_run(baked.archive, tmp_path / "cache", [sys.executable, "-m", "tinyapp"], tiny_app, tmp_path / "state")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "24.0"
    assert done.stderr.startswith("restored 2 module identities")  # standard output is the app's alone
    assert tree(tmp_path / "cache") == tree(restored_alone)  # not one file more: nothing compiled


@pytest.mark.parametrize(
    ("how", "env"),
    [("script", {}), ("module", {}), ("script", {"PYTHONSAFEPATH": "1"})],
    ids=["script", "module", "script-safe-path"],
)
def test_python_runs_here_and_the_app_sees_what_python_gives_it(baked, tmp_path, how, env):
    app = tmp_path / "app"
    app.mkdir()
    (app / "show.py").write_text(textwrap.dedent(SHOW))
    command = [sys.executable, "show.py", "a", "-b"] if how == "script" else [sys.executable, "-m", "show", "a", "-b"]
    alone = subprocess.run(command, cwd=app, capture_output=True, text=True, check=True, env={**_env(""), **env})
    done = bake_run(baked.archive, tmp_path / "cache", command, app, tmp_path / "state", **env)
    assert done.returncode == 0, done.stderr
    direct, restored = json.loads(alone.stdout), json.loads(done.stdout)
    assert restored.pop("here") is True and direct.pop("here") is False
    assert restored.pop("frozen") > 0 and direct.pop("frozen") == 0  # warp-fix's objects: out of the app's collections
    if how == "script":  # Python keeps argv[0] as typed; runpy gives the same file's absolute path
        assert restored["argv"][0] == str(app / "show.py") and direct["argv"][0] == "show.py"
        restored["argv"][0] = direct["argv"][0]
    assert restored == direct


def test_from_the_console_script_the_app_s_path_starts_where_python_starts_it(baked, tmp_path):
    """The `warp-fix` script's own folder (the venv's bin) is `sys.path[0]` until the app starts."""
    script = Path(sys.executable).with_name("warp-fix")
    if not script.exists():
        pytest.skip("warp-fix is not installed beside this interpreter")
    (tmp_path / "show.py").write_text(textwrap.dedent(SHOW))
    command = [sys.executable, "-m", "show"]
    alone = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=True)
    done = bake_run(baked.archive, tmp_path / "cache", command, tmp_path, tmp_path / "state", warp_fix=[str(script)])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path0"] == json.loads(alone.stdout)["path0"] == str(tmp_path)


def test_the_exit_code_is_the_app_s(baked, tmp_path):
    (tmp_path / "fails.py").write_text("import sys\nsys.exit(3)\n")
    done = bake_run(baked.archive, tmp_path / "cache", [sys.executable, "fails.py"], tmp_path, tmp_path / "state")
    assert done.returncode == 3


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("pkg.missing", "No module named pkg.missing"),
        ("pkg", "No module named pkg.__main__; 'pkg' is a package and cannot be directly executed"),
    ],
)
def test_a_module_python_cannot_run_gets_python_s_own_line(baked, tmp_path, module, said):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    alone = subprocess.run([sys.executable, "-m", module], cwd=tmp_path, capture_output=True, text=True)
    done = bake_run(baked.archive, tmp_path / "cache", [sys.executable, "-m", module], tmp_path, tmp_path / "state")
    assert done.returncode == alone.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == alone.stderr.strip() == f"{sys.executable}: {said}"


def test_a_folder_with_a_main_is_left_to_the_interpreter(baked, tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_text(textwrap.dedent(SHOW))
    done = bake_run(baked.archive, tmp_path / "cache", [sys.executable, "app"], tmp_path, tmp_path / "state")
    shown = json.loads(done.stdout)
    assert (shown["here"], shown["path0"]) == (False, str(tmp_path / "app"))  # exec'd: Python's own folder rule


def test_another_program_replaces_the_process_and_finds_the_cache(baked, tmp_path):
    command = ["sh", "-c", 'echo "$WARP_CACHE_PATH"; exit 4']
    done = bake_run(baked.archive, tmp_path / "cache", command, tmp_path, tmp_path / "state")
    assert (done.returncode, done.stdout.strip()) == (4, str(tmp_path / "cache"))


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["no-such-program-here"], "command not found: no-such-program-here"),
        ([sys.executable, "absent.py"], "cannot open absent.py: no such file"),
        ([sys.executable, "-m", "absent"], "no module named absent"),
        ([], "no command given"),
    ],
)
def test_a_command_that_cannot_start_is_one_line_and_nothing_is_written(baked, tmp_path, command, message):
    done = bake_run(baked.archive, tmp_path / "cache", command, tmp_path, tmp_path / "state")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"warp-fix: error: {done.stderr.split('error: ', 1)[1].strip()}"]
    assert message in done.stderr
    assert not (tmp_path / "cache").exists()


def test_a_refused_archive_starts_nothing(baked, tmp_path):
    tampered = repack(baked.archive, tmp_path / "tampered.tar.gz", edit_file=lambda data: data + b" ")
    (tmp_path / "mark.py").write_text("open('started', 'w').close()\n")
    done = bake_run(tampered, tmp_path / "cache", [sys.executable, "mark.py"], tmp_path, tmp_path / "state")
    assert done.returncode == 2 and "refused" in done.stderr
    assert not (tmp_path / "started").exists() and not (tmp_path / "cache").exists()
