"""An installed Warp library inside the repository's own virtualenv (`.venv/` at the root, git-ignored: what
`uv` makes by default), on real runs: it is an installed package, not the project's code because its files sit
under the project folder. The plan edits nothing under `.venv/` and offers the process-wide setting at the entry
point, exactly as for the same library installed outside the repository (tests/plan/test_installed_library_shapes.py).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.apply.conftest import PYTHON, git, init_repo
from tests.conftest import FIXTURES
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.model import CONSENT
from warp_fix.plan import make_plan
from warp_fix.probe import measure


def imgkit_wheel(folder: Path) -> Path:
    """The fixture's `vendor/imgkit` as a wheel, the form pip installs a package from an index in."""
    wheel = folder / "imgkit-0.1.0-py3-none-any.whl"
    info = "imgkit-0.1.0.dist-info"
    members = {f"imgkit/{f.name}": f.read_text() for f in (FIXTURES / "installed_kernels/vendor/imgkit").glob("*.py")}
    members[f"{info}/METADATA"] = "Metadata-Version: 2.1\nName: imgkit\nVersion: 0.1.0\n"
    members[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    members[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*members, f"{info}/RECORD"])
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return wheel


def repository_with_its_own_virtualenv(root: Path) -> tuple[Path, Path]:
    """fixtures/installed_kernels as a user's repository whose `.venv/` holds `imgkit`, installed there by pip from
    a wheel of the package (the repository itself no longer carries `vendor/`)."""
    name = "installed_kernels"
    tracked = git(FIXTURES, "ls-files", name).splitlines()
    files = {
        Path(path).relative_to(name).as_posix(): (FIXTURES / path).read_text()
        for path in tracked
        if Path(path).relative_to(name).parts[0] != "vendor"
    }
    files[".gitignore"] = ".venv/\n__pycache__/\n.pytest_cache/\n"
    repo = init_repo(root / "denoise", files)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    site = repo / ".venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    subprocess.run(
        [PYTHON, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), imgkit_wheel(root)],
        check=True,
    )
    assert (site / "imgkit" / "filters.py").is_file() and (repo / ".venv" / "pyvenv.cfg").is_file()
    return repo, site


@pytest.fixture(scope="module")
def denoise(tmp_path_factory):
    repo, site = repository_with_its_own_virtualenv(tmp_path_factory.mktemp("venv"))
    report = measure([PYTHON, "-m", "denoise"], repo, samples=1, env={"PYTHONPATH": str(site)})
    return repo, site, report


def test_nothing_under_the_virtualenv_is_edited_and_the_entry_point_setting_is_offered(denoise):
    repo, _, report = denoise
    assert any(".venv/lib/" in k.file for b in report.trace.builds for k in b.kernel_sources)
    plan = make_plan(report, repo)
    assert not [f for f in plan.fixes for file in f.files if file.startswith(".venv/")]
    (fix,) = [f for f in plan.fixes if f.slug == "unused-backward"]
    assert (fix.codemod, fix.safety) == ("config_at_entry", CONSENT)
    assert fix.args_json() == {
        "file": "denoise/__main__.py", "name": "enable_backward", "value": False,
        "before_line": 3, "before_statement": "import imgkit",
    }
    assert fix.targets == ["imgkit.filters"]


@pytest.mark.slow
def test_apply_with_consent_keeps_the_entry_setting_with_the_librarys_hash_moved(denoise, monkeypatch):
    repo, site, _ = denoise
    monkeypatch.setenv("PYTHONPATH", str(site))
    request = build_request(
        command=[PYTHON, "-m", "denoise"], cwd=repo, branch="wf/venv", samples=1, only=["unused-backward"],
        allow=["unused-backward"], test=f"{PYTHON} -m pytest -q -p no:cacheprovider tests",
    )
    (entry,) = run_apply(request).ledger.entries
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["adjoint_kernels"] == (3, 0)
    assert git(repo, "diff", "--name-only", "main..wf/venv") == "denoise/__main__.py"
