"""Late options and cache destruction in the shapes real programs have, on real runs of the fixtures."""

from __future__ import annotations

import shlex
import shutil

import pytest

from codemods import run_codemod
from tests.apply.conftest import PYTHON, fixture_repo, git, init_repo
from tests.conftest import FIXTURES
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT
from warp_fix.plan import make_plan
from warp_fix.probe import measure


def finding(plan, slug: str):
    return next(f for f in plan.findings if f.slug == slug)


def fixes(plan, slug: str):
    return [f for f in plan.fixes if f.slug == slug]


def test_helper_made_per_run_cache_dir_is_discarded_by_the_runs_own_evidence(plan_of):
    plan = plan_of("helper_cache_dir")
    found = finding(plan, "cache-discarded")
    assert found.status == "fired"
    assert "per-run" in found.reason and "warm run still compiled 1 module" in found.reason
    assert any("cold run compiled into <private>/tmp/heatgrid-" in e.detail for e in found.evidence)
    (fix,) = fixes(plan, "cache-discarded")
    assert fix.codemod == "keep_cache"
    # the helper's docstring says it "keeps $HOME clean": that makes it no maintenance path
    assert fix.args_json() == {
        "file": "heatgrid/env.py",
        "lines": [13],
        "protected_functions": [],
        "helpers": ["use_private_kernel_cache"],
    }


@pytest.fixture(scope="module")
def kept_cache(tmp_path_factory, measured):
    """helper_cache_dir as a user's git repository, with the cache-discarded fix applied for real."""
    source = FIXTURES / "helper_cache_dir"
    files = {
        path.relative_to(source).as_posix(): path.read_text()
        for path in source.rglob("*")
        if path.is_file() and not any(part == "__pycache__" or part.startswith(".") for part in path.parts)
    }
    repo = init_repo(tmp_path_factory.mktemp("user") / "heatgrid", files)
    request = build_request(
        command=[PYTHON, "-m", "heatgrid"],
        cwd=repo,
        branch="wf/cache",
        samples=1,
        only=["cache-discarded"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    return repo, result


def test_keeping_the_cache_is_kept_and_the_next_start_reuses_it(kept_cache, tmp_path):
    repo, result = kept_cache
    (entry,) = [e for e in result.ledger.entries if e.slug == "cache-discarded"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["warm_builds"] == (1, 0)
    assert git(repo, "diff", "--name-only", "main..wf/cache") == "heatgrid/env.py"
    checkout = tmp_path / "applied"
    git(repo, "worktree", "add", "-q", str(checkout), "wf/cache")
    try:
        after = measure([PYTHON, "-m", "heatgrid"], checkout, samples=1)
    finally:
        git(repo, "worktree", "remove", "--force", str(checkout))
    assert after.summary.warm_builds == 0
    assert not after.cache_dir_evidence.per_run
    assert "wp.config.kernel_cache_dir" in (repo / "heatgrid" / "env.py").read_text()


def test_a_librarys_options_call_is_neither_a_late_option_nor_a_user_no_op():
    report = measure([PYTHON, "app.py"], FIXTURES / "script_main", samples=1)
    render = next(c for c in report.trace.option_changes if c.target == "warp.render.render_opengl")
    assert render.from_library
    plan = make_plan(report, FIXTURES / "script_main")
    found = finding(plan, "late-module-options")
    assert found.status == "ruled-out"
    assert found.facts.no_ops == []  # the script's own call at app.py:8 reaches __main__, built later
    assert "no kernels" not in found.reason
    (library,) = [e for e in found.evidence if "installed package" in e.detail]
    assert library.file.endswith("render_opengl.py") and library.file != "app.py"
    assert fixes(plan, "late-module-options") == []


def test_a_user_no_op_call_is_reported_once_with_its_line(plan_of):
    plan = plan_of("noop_options")
    found = finding(plan, "late-module-options")
    assert found.status == "ruled-out"
    assert [(n.module, n.file, n.line) for n in found.facts.no_ops] == [
        ("reducers.ops", "reducers/ops.py", 28)
    ]
    assert "reducers/ops.py:28" in found.reason and "no kernels" in found.reason
    assert fixes(plan, "late-module-options") == []


def test_a_call_run_twice_is_still_one_no_op(tmp_path):
    app = tmp_path / "noop_twice"
    shutil.copytree(FIXTURES / "noop_options", app, ignore=shutil.ignore_patterns("__pycache__"))
    main = app / "reducers" / "__main__.py"
    main.write_text(main.read_text().replace("    reducers.forward_only()\n", "    for _ in range(3):\n"
                                             "        reducers.forward_only()\n"))
    report = measure([PYTHON, "-m", "reducers"], app, samples=1)
    assert sum(c.target == "reducers.ops" for c in report.trace.option_changes) == 3
    found = finding(make_plan(report, app), "late-module-options")
    assert len(found.facts.no_ops) == 1


def test_config_moved_to_the_entry_point_is_not_flagged_again(tmp_path):
    app = tmp_path / "boids"
    shutil.copytree(FIXTURES / "config_after_import", app, ignore=shutil.ignore_patterns("__pycache__"))
    command = [PYTHON, "-m", "boids"]
    before = make_plan(measure(command, app, samples=1), app)
    assert finding(before, "config-after-import").status == "fired"
    (fix,) = fixes(before, "config-after-import")
    run_codemod(fix.codemod, app, fix.places)
    after = make_plan(measure(command, app, samples=1), app)
    assert finding(after, "config-after-import").status == "ruled-out"


def test_precompiled_headers_off_names_the_line_that_set_it(plan_of):
    found = finding(plan_of("precompiled_header"), "precompiled-header")
    assert found.status == "fired"
    assert found.reason.endswith("(set by wp.config at wavefield/__main__.py:5)")
    assert [(e.file, e.line) for e in found.evidence] == [("wavefield/__main__.py", 5)]


def test_a_runtime_helper_that_ran_loses_its_cache_discarding_lines_and_the_rebuild_command_keeps_its_own(plan_of):
    plan = plan_of("runtime_helper_cache")
    found = finding(plan, "cache-discarded")
    assert found.status == "fired" and "per-run" in found.reason
    (fix,) = fixes(plan, "cache-discarded")
    assert fix.args_json() == {
        "file": "tidepool/runtime.py", "lines": [11, 12], "protected_functions": ["rebuild_kernels"],
    }


@pytest.mark.slow
def test_apply_keeps_the_cache_and_leaves_the_rebuild_command(tmp_path):
    repo = fixture_repo(tmp_path, "runtime_helper_cache")
    request = build_request(
        command=[PYTHON, "-m", "tidepool"], cwd=repo, branch="wf/tidepool", samples=1, only=["cache-discarded"],
        test=f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider tests",
    )
    result = run_apply(request)
    (entry,) = [e for e in result.ledger.entries if e.slug == "cache-discarded"]
    assert entry.outcome == KEPT, entry.reason
    assert entry.numbers.structure["warm_builds"] == (1, 0)
    assert git(repo, "diff", "--name-only", "main..wf/tidepool") == "tidepool/runtime.py", result.ledger.entries
    runtime = git(repo, "show", "wf/tidepool:tidepool/runtime.py")
    assert "CUDA_CACHE_DISABLE" not in runtime and "mkdtemp" not in runtime
    assert "wp.config.quiet = not verbose" in runtime and "wp.clear_kernel_cache()" in runtime
