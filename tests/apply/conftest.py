"""Temporary git repositories holding small real Warp apps, and a snapshot of a user's checkout."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PYTHON = sys.executable
REPO = Path(__file__).resolve().parents[2]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def init_repo(path: Path, files: dict[str, str], identity: bool = True) -> Path:
    """A repository with `files` committed on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
    git(path, "init", "-q", "-b", "main")
    if identity:
        git(path, "config", "user.name", "Ada Tester")
        git(path, "config", "user.email", "ada@example.com")
    git(path, "add", "-A")
    subprocess.run(
        ["git", "commit", "-q", "-m", "initial"],
        cwd=path,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada Tester",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada Tester",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
        },
    )
    return path


def fixture_repo(root: Path, name: str) -> Path:
    """A repository holding the fixture app's committed files (not the caches a local run left next to them)."""
    fixtures = REPO / "fixtures"
    tracked = git(fixtures, "ls-files", name).splitlines()
    files = {Path(path).relative_to(name).as_posix(): (fixtures / path).read_text() for path in tracked}
    return init_repo(root / name, files)


def checkout_snapshot(repo: Path) -> dict[str, str]:
    """Everything a user could notice: HEAD, branch, index, status, and the bytes of every file."""
    files = {}
    for path in sorted(repo.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(repo).parts:
            files[path.relative_to(repo).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "HEAD": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "index": hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "files": repr(files),
    }


def run_cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run(
        [PYTHON, "-m", "warp_fix", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


# A pipeline with four stages, each a Warp module whose options are set inside a function.
# `options.update` changes options without forcing a rebuild, so after the first launch it decides
# nothing in the original program; hoisted to module scope it decides the first (and only) build.
PIPELINE = {
    "pipeline/__init__.py": "",
    "pipeline/forward.py": '''
        """Forward-only stage: its backward code is never used."""

        import warp as wp


        @wp.kernel
        def scale(a: wp.array(dtype=float), s: float):
            i = wp.tid()
            a[i] = a[i] * s


        def forward_only():
            wp.get_module(__name__).options.update({"enable_backward": False})


        def run(a):
            wp.launch(scale, dim=a.shape[0], inputs=[a, 2.0], device="cpu")
            forward_only()
            wp.launch(scale, dim=a.shape[0], inputs=[a, 0.5], device="cpu")
    ''',
    "pipeline/fast.py": '''
        """A stage that asks for fast math only after its first launch."""

        import warp as wp


        @wp.kernel
        def shift(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = a[i] + 1.0


        def go_fast():
            wp.get_module(__name__).options.update({"fast_math": True})


        def run(a):
            wp.launch(shift, dim=a.shape[0], inputs=[a], device="cpu")
            go_fast()
            wp.launch(shift, dim=a.shape[0], inputs=[a], device="cpu")
    ''',
    "pipeline/early.py": '''
        """Options already set before the first launch: hoisting them gains nothing.

        (Warp's generated source carries the kernel's line numbers; this docstring keeps them
        two-digit when a hoist shifts the kernel down two lines, so the source size stays equal.)
        """

        import warp as wp


        @wp.kernel
        def square(a: wp.array(dtype=float)):
            i = wp.tid()
            a[i] = a[i] * a[i]


        def prepare():
            wp.get_module(__name__).options.update({"enable_backward": False})


        def run(a):
            prepare()
            wp.launch(square, dim=a.shape[0], inputs=[a], device="cpu")
    ''',
    "pipeline/settings.py": '''
        """Stage settings; the project's tests check that configure() applies them."""

        import warp as wp


        def configure():
            wp.get_module(__name__).options.update({"enable_backward": False})
    ''',
    "pipeline/vendor.py": '''
        """Vendored code the project never edits."""

        import warp as wp


        def setup():
            wp.get_module(__name__).options.update({"enable_backward": False})
    ''',
    "pipeline/__main__.py": """
        import warp as wp

        from pipeline import early, fast, forward, settings


        def main():
            settings.configure()
            a = wp.full(16, 3.0, dtype=float, device="cpu")
            forward.run(a)
            fast.run(a)
            early.run(a)
            print("total", float(a.numpy().sum()))


        if __name__ == "__main__":
            main()
    """,
    "tests/test_settings.py": """
        import warp as wp

        from pipeline import settings


        def test_configure_applies_the_options():
            wp.get_module(settings.__name__).options["enable_backward"] = True
            settings.configure()
            assert wp.get_module(settings.__name__).options["enable_backward"] is False
    """,
    "pyproject.toml": """
        [project]
        name = "pipeline"
        version = "0.1.0"

        [tool.warp-fix]
        protected = ["pipeline/vendor.py"]
    """,
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}
