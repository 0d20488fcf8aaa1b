"""The layers in pyproject.toml hold: a change that breaks one fails the suite, not only a review."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from warp_fix.mechanisms import MECHANISMS

REPO = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_lint_imports_keeps_every_contract():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def test_every_mechanism_is_in_the_independence_contract():
    (independent,) = [c["modules"] for c in CONTRACTS if c["type"] == "independence"]
    assert sorted(independent) == sorted(type(m).__module__ for m in MECHANISMS)
