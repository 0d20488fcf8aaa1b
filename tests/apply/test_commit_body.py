"""A kept fix's commit, as a reviewer reads it in `git log`: it leads with the metric that decided, then says
what the fix does, what else was measured, which builds are gone, what the codemod noted, which text the
edit may have made false, and how to roll it back. Real applies on fixture apps."""

from __future__ import annotations

import pytest

from tests.apply.conftest import PYTHON, fixture_repo, git
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT, EditNote, Entry

pytestmark = pytest.mark.slow


def kept_commit(repo, branch: str, command: list[str], **request) -> tuple[Entry, str]:
    """Apply on `branch`: the ledger entry of its one kept fix, and the body of its one commit."""
    ledger = run_apply(build_request(command=command, cwd=repo, branch=branch, samples=1, **request)).ledger
    kept = [e for e in ledger.entries if e.outcome == KEPT]
    assert len(kept) == 1, [(e.fix_id, e.outcome, e.reason) for e in ledger.entries]
    assert git(repo, "rev-list", "--count", f"main..{branch}") == "1"
    return kept[0], git(repo, "log", "-1", "--format=%B", branch)


def test_a_kept_cache_leads_with_the_warm_start_and_names_the_build_it_saved(tmp_path):
    """helper_cache_dir compiles into a temp dir removed at exit; keep_cache edits that: only the second start
    changes, so the commit leads with the warm run's module work, then its warm builds."""
    repo = fixture_repo(tmp_path, "helper_cache_dir")
    entry, body = kept_commit(repo, "wf/cache", [PYTHON, "-m", "heatgrid"], only=["cache-discarded"])
    subject, decision, *paragraphs = body.split("\n\n")
    assert decision.startswith("Kept for warm module work: ") and decision.endswith("warm builds: 1 -> 0.")
    assert "\n\nBuilds gone:\n- warm-start compile of heatgrid.solver on cpu, " in body
    assert "\n\nCodemod notes:\n- heatgrid/env.py: imports left unused removed: wp\n" in body
    # the helper no longer sets the cache directory: its docstring is the reviewer's to check
    assert "\n\nLeft for you to check:\n- heatgrid/env.py:9 use_private_kernel_cache(): " in body
    assert any(p.startswith("Roll back: `git revert` this commit on wf/cache") for p in paragraphs)
    order = ["Kept for", "Also measured", "Builds gone:", "Codemod notes:", "Left for you to check:", "Roll back:"]
    assert [body.index(heading) for heading in order] == sorted(body.index(heading) for heading in order)
    # the ledger holds the same, typed, for `warp-fix log` and tools
    assert EditNote("heatgrid/env.py", "removed-import", "imports left unused removed: wp") in entry.notes
    assert [(point.file, point.line, point.function) for point in entry.to_check] == [
        ("heatgrid/env.py", 9, "use_private_kernel_cache")
    ]


def test_a_hoist_leads_with_the_identities_and_flags_the_docstring_of_the_function_it_emptied(tmp_path):
    """late_module_options sets its options in configure_solver() after the first load; the hoist moves them to
    module scope, one identity fewer. configure_solver() is public: it stays, saying where its work went."""
    repo = fixture_repo(tmp_path, "late_module_options")
    _, body = kept_commit(repo, "wf/opts", [PYTHON, "-m", "cloth"], test="python -m pytest -q tests")
    assert body.split("\n\n")[1].startswith("Kept for module identities built: 2 -> 1;")
    assert "- rebuild of cloth.solver on cpu, " in body and "(cloth/solver.py:91 in\n  configure_solver)" in body
    assert "\n\nLeft for you to check:\n- cloth/solver.py:92 configure_solver(): " in body
    assert "- cloth/solver.py: configure_solver() was left empty: kept for its\n  callers, with a comment" in body
    solver = git(repo, "show", "wf/opts:cloth/solver.py")
    assert '    """The cloth stage is forward-only: no gradients are needed."""\n    # Its module options' in solver


def test_the_demo_app_s_commits_each_lead_with_what_decided_and_touch_a_file_once_per_fix(tmp_path):
    """The app `warp-fix demo` applies (fixtures/composite): every kept fix is one commit, whose body leads with
    the metric that decided, and whose summary line says whether each timing is beyond its noise band."""
    from tests.apply.conftest import REPO, init_repo
    from warp_fix.apply.view import total_line

    app = "warp_fix/demo_app"  # fixtures/composite links here
    tracked = git(REPO, "ls-files", app).splitlines()
    repo = init_repo(tmp_path / "terrain", {path[len(app) + 1 :]: (REPO / path).read_text() for path in tracked})
    # two of its four fixes (the demo itself, run by CI, applies them all): a late kernel and a discarded cache
    only = ["kernel-after-load", "cache-discarded"]
    request = build_request(command=[PYTHON, "-m", "terrain"], cwd=repo, branch="wf/demo", samples=1, only=only)
    ledger = run_apply(request).ledger
    kept = [e for e in ledger.entries if e.outcome == KEPT]
    assert len(kept) >= 2, [(e.fix_id, e.outcome, e.reason) for e in ledger.entries]
    shas = git(repo, "rev-list", "--reverse", "main..wf/demo").splitlines()
    assert len(shas) == len(kept)
    for entry, sha in zip(kept, shas):
        body = git(repo, "log", "-1", "--format=%B", sha)
        assert body.split("\n\n")[1].startswith("Kept for "), body
        assert "Roll back: `git revert` this commit on wf/demo" in body
        assert f"Warp-Fix-Mechanism: {entry.slug}" in body
    slugs_by_file = [(entry.slug, file) for entry in kept for file in entry.files]
    assert len(slugs_by_file) == len(set(slugs_by_file))  # one commit per fix per file
    if ledger.total is not None:
        line = total_line(ledger.total)
        assert "noise band" in line and " -> " in line  # every timing says how it stands against its band
