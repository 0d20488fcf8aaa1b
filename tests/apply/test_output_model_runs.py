"""Real runs of programs whose output varies: apply learns the output model and keeps a fix; a result moved
beyond its tolerance makes a candidate INVALID."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from tests.apply.conftest import PYTHON, fixture_repo, git
from tests.conftest import FIXTURES
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.compare import INVALID, compare
from warp_fix.probe import measure

pytestmark = pytest.mark.slow


def apply_fixture(root: Path, name: str, package: str):
    repo = fixture_repo(root, name)
    request = build_request(
        command=[PYTHON, "-m", package],
        cwd=repo,
        branch="wf/startup",
        # up to 3 per arm: a structural win that one slow run contradicts is measured again, not dropped
        # (the baseline always takes two cold+warm pairs: four runs to learn the output from)
        samples=3,
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    return repo, run_apply(request)


@pytest.fixture(scope="module")
def noisy_sum(tmp_path_factory):
    return apply_fixture(tmp_path_factory.mktemp("noisy"), "noisy_sum", "noisy")


@pytest.fixture(scope="module")
def scoped_timer(tmp_path_factory):
    return apply_fixture(tmp_path_factory.mktemp("timer"), "scoped_timer", "timed")


def test_a_sum_varying_in_its_last_digits_gets_a_tolerance_and_the_fix_is_kept(noisy_sum):
    repo, result = noisy_sum
    model = result.ledger.output_model
    assert (model.exact, model.tolerant, model.ignored, model.runs) == (2, 1, 0, 4)
    assert model.rules[0].text.startswith("sum ")
    (kept,) = result.ledger.of(KEPT)
    assert kept.slug == "unused-backward"
    assert kept.numbers.output_detail == "within learned tolerance (1 numbers tolerant, 0 timings ignored)"
    message = git(repo, "log", "-1", "--format=%B", "wf/startup")
    assert "program output preserved: yes, within learned tolerance" in message
    assert "Warp-Fix-Output: within learned tolerance" in message
    assert "## Output" in (repo / ".git" / "warp-fix" / "wf" / "startup.md").read_text()


def test_printed_timings_are_ignored_and_the_fix_is_kept(scoped_timer):
    repo, result = scoped_timer
    model = result.ledger.output_model
    assert (model.tolerant, model.ignored) == (0, 2)
    assert [rule.text.split(" took ")[0] for rule in model.rules] == ["first step", "steps"]
    (kept,) = result.ledger.of(KEPT)
    assert kept.slug == "late-module-options"
    assert kept.numbers.output_detail.startswith(
        "within learned tolerance (0 numbers tolerant, 2 timings ignored: e.g. line 'first step took "
    )
    assert "ignored (varied" in git(repo, "log", "-1", "--format=%B", "wf/startup")


def test_a_result_moved_beyond_its_tolerance_is_invalid(tmp_path):
    baseline_dir, candidate_dir = tmp_path / "baseline", tmp_path / "candidate"
    for target in (baseline_dir, candidate_dir):
        shutil.copytree(FIXTURES / "noisy_sum", target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    field = candidate_dir / "noisy" / "field.py"
    field.write_text(field.read_text().replace("scale: float = 1000.0", "scale: float = 1001.0"))
    before = measure([PYTHON, "-m", "noisy"], baseline_dir, samples=2)
    after = measure([PYTHON, "-m", "noisy"], candidate_dir, samples=1)
    comparison = compare(before, after)
    assert comparison.verdict == INVALID and comparison.output_same is False
    assert comparison.output_detail.startswith("printed number changed beyond its tolerance on line 3: 'sum ")
    assert comparison.output_detail in comparison.reasons
