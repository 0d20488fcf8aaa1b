"""The corpus harness (benchmarks/corpus.py): scenario files are well-formed, agreement is computed honestly, and
warp-fix agrees with the written expectations on two small CPU scenarios (Warp's own examples as user scripts)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from codemods import REGISTRY
from warp_fix.mechanisms import SLUGS

REPO = Path(__file__).resolve().parents[1]


def _load_harness():
    spec = importlib.util.spec_from_file_location("corpus_harness", REPO / "benchmarks" / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


corpus = _load_harness()
SCENARIOS = corpus.load_scenarios()

# The two smallest CPU scenarios (Warp's own examples as user scripts): warp-fix must agree with them exactly.
SMALL_CPU = ["warp-example-wave", "warp-example-fluid"]


def test_there_are_enough_scenarios():
    projects = {s.project.split(" (")[0] for s in SCENARIOS}
    assert len(SCENARIOS) >= 8
    assert len(projects) >= 5


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario_expectation_is_complete(scenario):
    """Every mechanism is either expected to fire (with evidence) or expected not to (with a reason), never both."""
    fires, quiet = set(scenario.expect.fires), set(scenario.expect.must_not_fire)
    assert not fires & quiet
    assert fires | quiet == set(SLUGS)
    assert all(entry.get("evidence") and entry.get("why") for entry in scenario.expect.fires.values())
    assert scenario.device in ("cpu", "cuda")
    assert scenario.expect.verdict
    for fix in scenario.expect.fixes:
        assert fix.slug in fires, f"a fix for {fix.slug}, which is not expected to fire"
        assert fix.safety in ("safe", "consent", "advisory")
        assert fix.codemod == "none" if fix.safety == "advisory" else fix.codemod in REGISTRY


def _outcome(fired: list[str], planned: list[dict]) -> corpus.Outcome:
    outcome = corpus.Outcome("warp-example-wave", "cpu", [])
    outcome.fired = fired
    outcome.findings = {slug: {"status": "fired", "reason": "r", "evidence": []} for slug in fired}
    outcome.planned = planned
    return outcome


def _planned(slug: str, codemod: str | None, safety: str, files: list[str]) -> dict:
    return {"id": "F1", "slug": slug, "codemod": codemod, "safety": safety, "files": files, "lines": [], "title": ""}


def test_agreement_when_plan_matches_the_expectation():
    wave = next(s for s in SCENARIOS if s.name == "warp-example-wave")
    fix = _planned("unused-backward", "module_options", "safe", ["example_wave.py"])
    assert corpus.disagreements(wave, _outcome(["unused-backward"], [fix])) == []


def test_every_kind_of_disagreement_is_reported():
    wave = next(s for s in SCENARIOS if s.name == "warp-example-wave")
    wrong_class = _planned("unused-backward", "module_options", "consent", ["example_wave.py"])
    extra = _planned("precompiled-header", None, "advisory", [])
    found = corpus.disagreements(wave, _outcome(["precompiled-header"], [wrong_class, extra]))
    kinds = sorted(line.split(":")[0] for line in found)
    assert kinds == ["extra fix", "false diagnosis", "missed diagnosis", "wrong fix for unused-backward"]


def test_a_fix_another_expectation_matches_is_not_reported_as_wrong_for_the_first():
    pendulum = next(s for s in SCENARIOS if s.name == "newton-library-pendulum-cpu")
    script = "newton/examples/basic/example_basic_pendulum.py"
    entry = _planned("unused-backward", "config_at_entry", "consent", [script])
    unique = _planned("unique-on-stable", "drop_unique", "safe", ["newton/_src/geometry/inertia.py"])
    found = corpus.disagreements(pendulum, _outcome(["unused-backward", "unique-on-stable"], [entry, unique]))
    assert found == ["missing fix: unused-backward module_options/safe on newton/_src/viewer/kernels.py"]


def test_a_kept_commit_on_a_file_the_expectation_does_not_name_is_rejected():
    wave = next(s for s in SCENARIOS if s.name == "warp-example-wave")
    planned = _planned("unused-backward", "module_options", "safe", ["example_wave.py"])
    outcome = _outcome(["unused-backward"], [planned])
    outcome.ledger = {
        "kept": {
            "F1": {"slug": "unused-backward", "reason": "", "files": ["example_wave.py"], "commit": "a"},
            "F2": {"slug": "unused-backward", "reason": "", "files": ["other.py"], "commit": "b"},
        }
    }
    assert corpus.disagreements(wave, outcome) == ["kept commit a reader would reject: F2 unused-backward on other.py"]


def test_an_expected_report_without_edit_is_met_by_a_stated_reason_naming_its_file():
    alchemi = next(s for s in SCENARIOS if s.name == "alchemi-neighbor-list-cpu")
    want = next(f for f in alchemi.expect.fixes if f.codemod == "none")
    outcome = _outcome([want.slug], [])
    missing = f"missing fix: {want.slug} none/advisory on {want.target}"
    assert missing in corpus.disagreements(alchemi, outcome)
    outcome.not_proposed = [{"slug": want.slug, "reason": f"kernel at {want.target}:294 is made per call"}]
    assert missing not in corpus.disagreements(alchemi, outcome)


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL_CPU)
def test_warp_fix_agrees_on_small_cpu_scenario(name, tmp_path):
    scenario = next(s for s in SCENARIOS if s.name == name)
    if corpus.installed_warp_version() != scenario.version:
        pytest.skip(f"the expectation was written against warp-lang {scenario.version}")
    outcome = corpus.run_scenario(scenario, tmp_path, samples=1, with_apply=False, console=corpus.Console(quiet=True))
    assert not outcome.error, outcome.error
    assert outcome.disagreements == []


def _wheel_file(directory: Path, distribution: str, module: str, tags: str = "py3-none-any") -> Path:
    path = directory / f"{distribution}-1.0-{tags}.whl"
    with corpus.zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{module}/__init__.py", "VALUE = 'from the wheel'\n")
        archive.writestr(f"{distribution}-1.0.dist-info/METADATA", f"Name: {distribution}\n")
    return path


def test_a_missing_package_is_unpacked_from_the_wheels_dir_and_an_importable_one_is_left_alone(tmp_path, monkeypatch):
    wheels_dir = tmp_path / "wheels"
    wheels_dir.mkdir()
    _wheel_file(wheels_dir, "corpus_probe_pkg", "corpus_probe_pkg")
    _wheel_file(wheels_dir, "pytest", "pytest")  # importable already: must not shadow the installed one
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    wheels = corpus.Wheels.from_environment(str(wheels_dir), tmp_path / "site")
    wheels.make_importable(["corpus_probe_pkg", "pytest"])
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == [
        "corpus_probe_pkg",
        "corpus_probe_pkg-1.0.dist-info",
    ]
    assert importlib.util.find_spec("corpus_probe_pkg").origin.startswith(str(tmp_path / "site"))
    assert str(tmp_path / "site") in corpus.os.environ["PYTHONPATH"]


def test_a_wheel_for_another_python_or_platform_is_not_taken(tmp_path):
    _wheel_file(tmp_path, "native_pkg", "native_pkg", "cp27-cp27m-win_amd64")
    wheels = corpus.Wheels.from_environment(str(tmp_path), tmp_path / "site")
    assert wheels.find("native-pkg") is None
    with pytest.raises(corpus.CorpusError, match="needs native_pkg"):
        wheels.make_importable(["native_pkg"])


def test_offline_a_project_wheel_missing_from_the_wheels_dir_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setattr(corpus, "WHEEL_CACHE", tmp_path / "cache")
    wheels = corpus.Wheels.from_environment(str(tmp_path), tmp_path / "site")
    with pytest.raises(corpus.CorpusError, match=r"no wheel of warp-nn==0\.4\.1"):
        wheels.project_wheel("warp-nn", "0.4.1")


def test_a_scenario_can_require_its_own_project_as_an_installed_library(tmp_path, monkeypatch):
    """`requires` naming the project itself, with `packages = []`: the wheel is fetched before the requires are
    unpacked, so a first run (nothing in the cache yet) stages a checkout of the user's scripts alone."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(corpus, "WHEEL_CACHE", cache)
    monkeypatch.delenv("PIP_NO_INDEX", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    run = corpus._run

    def pip_download_or_run(argv, cwd, timeout=None):  # pip's download, without a package index
        if argv[1:4] == ["-m", "pip", "download"]:
            _wheel_file(cache, "corpus_probe_lib", "corpus_probe_lib")
            return CompletedProcess(argv, 0, "", "")
        return run(argv, cwd, timeout)

    monkeypatch.setattr(corpus, "_run", pip_download_or_run)
    scenario = corpus.Scenario(
        name="probe",
        project="probe",
        package="corpus_probe_lib",
        version="1.0",
        device="cpu",
        timeout=60,
        command=["python", "-c", "pass"],
        test="",
        staging={"kind": "wheel", "requires": ["corpus_probe_lib"], "packages": [], "scripts": ["diffsim_ball.py"]},
        expect=corpus.Expectation(fires={}, must_not_fire={}, fixes=[], verdict="-"),
        path=tmp_path / "probe.toml",
    )
    repo = corpus.stage(scenario, tmp_path / "work", corpus.Wheels.from_environment(None, tmp_path / "site"))
    assert sorted(p.name for p in repo.iterdir()) == [".git", "diffsim_ball.py"]
    assert importlib.util.find_spec("corpus_probe_lib").origin.startswith(str(tmp_path / "site"))
