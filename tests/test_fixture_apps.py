"""Every fixture application runs, is deterministic, and passes its own tests.

Each fixture under ``fixtures/<name>/`` is a small, real Warp project that compiles on
the CPU. For each one this runs its ``[tool.warp-fix] command`` twice (the output,
minus Warp's own log lines, must be identical) and its ``[tool.warp-fix] test``
command once. All runs share one session-scoped Warp kernel cache so a module is
compiled once per session; fixtures that clear the kernel cache themselves get a
private cache so they never wipe the shared one. A fixture's ``vendor/`` holds packages it uses as
installed ones: they are on ``PYTHONPATH``. The jobs run concurrently (one
worker per CPU, at most 4); expect about two minutes on two idle cores.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from warp_fix.probe.output import skeleton

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# CPU fixtures only: ``gpu_*`` fixtures need a CUDA device and are exercised elsewhere.
APPS = sorted(p.name for p in FIXTURES.iterdir() if (p / "pyproject.toml").is_file() and not p.name.startswith("gpu_"))
TIMEOUT_S = 300
# Fixtures whose printed numbers differ between runs on purpose (a random-order sum, wp.ScopedTimer durations).
NUMBERS_VARY = {"noisy_sum", "scoped_timer"}

# Warp's own output: init banner (and its indented lines), module load lines, warnings.
_WARP_LINE = re.compile(
    r"^(Warp \d|Warp CUDA warning|Warp UserWarning|Warp DeprecationWarning|Module \S+ \S+ load on device|\s)"
)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float = 0.0

    def app_output(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.strip() and not _WARP_LINE.match(line)]

    def describe(self) -> str:
        return f"rc={self.returncode}\n--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"


def _config(app: str) -> dict:
    with open(FIXTURES / app / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["warp-fix"]


def _clears_cache(app: str) -> bool:
    return any("clear_kernel_cache" in p.read_text() for p in (FIXTURES / app).rglob("*.py"))


def _argv(cmd: list[str] | str) -> list[str]:
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def _run(app: str, argv: list[str], cache: Path) -> Run:
    env = dict(os.environ)
    env["WARP_CACHE_PATH"] = str(cache)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONPATH", None)
    if (FIXTURES / app / "vendor").is_dir():  # the packages the app has installed beside it
        env["PYTHONPATH"] = str(FIXTURES / app / "vendor")
    start = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=FIXTURES / app, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return Run(-1, str(e.stdout or ""), f"timed out after {TIMEOUT_S} s", TIMEOUT_S)
    return Run(p.returncode, p.stdout, p.stderr, time.perf_counter() - start)


def _jobs_for(app: str, shared: Path, private_root: Path) -> tuple[Run, Run, Run]:
    cfg = _config(app)
    cache = private_root / app if _clears_cache(app) else shared
    cache.mkdir(parents=True, exist_ok=True)
    first = _run(app, _argv(cfg["command"]), cache)
    second = _run(app, _argv(cfg["command"]), cache)
    no_cache = ["-p", "no:cacheprovider"] if "pytest" in cfg["test"] else []  # unittest's -p is a pattern
    tests = _run(app, _argv(cfg["test"]) + no_cache, cache)
    return first, second, tests


@pytest.fixture(scope="session")
def fixture_runs(request, tmp_path_factory) -> dict[str, tuple[Run, Run, Run]]:
    # only the fixtures whose tests were selected (e.g. with -k)
    selected = {
        item.callspec.params["app"]
        for item in request.session.items
        if hasattr(item, "callspec") and "app" in item.callspec.params
    }
    shared = tmp_path_factory.mktemp("warp-cache")
    private_root = tmp_path_factory.mktemp("warp-private-caches")
    workers = max(1, min(4, os.cpu_count() or 1))
    # longest first so the pool drains evenly
    slow_first = sorted((a for a in APPS if a in selected), key=lambda a: (not _clears_cache(a), a))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {app: pool.submit(_jobs_for, app, shared, private_root) for app in slow_first}
        runs = {app: f.result() for app, f in futures.items()}
    for app, (first, second, tests) in runs.items():  # shown with -s / -rA
        print(f"{app:36s} run {first.seconds:5.1f}s  repeat {second.seconds:5.1f}s  tests {tests.seconds:5.1f}s")
    return runs


def test_fixtures_found():
    assert len(APPS) >= 13, APPS
    for app in APPS:
        command = _config(app)["command"]
        assert command[0] == "python", app
        if command[1] == "-m":  # a package's __main__, or a module (`-m examples.example_alias`)
            module = FIXTURES / app / command[2].replace(".", "/")
            assert (module / "__main__.py").is_file() or module.with_suffix(".py").is_file(), app
        else:  # a script run as `python app.py`: its kernels live in `__main__`
            assert command[1].endswith(".py") and (FIXTURES / app / command[1]).is_file(), app
        assert list((FIXTURES / app / "tests").glob("test_*.py")), app  # its own tests (a suite has several)
        assert (FIXTURES / app / "README.md").is_file(), app


@pytest.mark.parametrize("app", APPS)
def test_app_runs_deterministically(app, fixture_runs):
    first, second, _ = fixture_runs[app]
    assert first.returncode == 0, first.describe()
    assert second.returncode == 0, second.describe()
    assert first.app_output(), f"{app} printed nothing of its own\n{first.describe()}"
    if app in NUMBERS_VARY:  # by design: only the text is the same every run
        assert [skeleton(x) for x in first.app_output()] == [skeleton(x) for x in second.app_output()]
    else:
        assert first.app_output() == second.app_output()


@pytest.mark.parametrize("app", APPS)
def test_app_own_tests_pass(app, fixture_runs):
    _, _, tests = fixture_runs[app]
    assert tests.returncode == 0, tests.describe()
    # some tests ran: pytest says "N passed", unittest (the demo's example) "Ran N tests" on stderr
    assert " passed" in tests.stdout or re.search(r"^Ran [1-9]\d* tests?", tests.stderr, re.MULTILINE), tests.describe()
