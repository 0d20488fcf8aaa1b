"""A codemod's notes reach the commit: what the edit cleaned up on the side is in `git log`, not only the diff."""

from __future__ import annotations

import pytest

from tests.apply.conftest import PYTHON, fixture_repo, git
from warp_fix.apply import build_request, run_apply
from warp_fix.apply.ledger import KEPT, EditNote

pytestmark = pytest.mark.slow


def test_keeping_the_cache_says_in_the_commit_which_imports_it_removed(tmp_path):
    """helper_cache_dir compiles into a temp dir removed at exit; keep_cache edits that, and removes what the
    edit left unused: the diff shows the import gone, the commit body says why."""
    repo = fixture_repo(tmp_path, "helper_cache_dir")
    request = build_request(
        command=[PYTHON, "-m", "heatgrid"], cwd=repo, branch="wf/cache", samples=1, only=["cache-discarded"]
    )
    (entry,) = [e for e in run_apply(request).ledger.entries if e.slug == "cache-discarded"]
    assert entry.outcome == KEPT, entry.reason
    assert EditNote("heatgrid/env.py", "removed-import", "imports left unused removed: wp") in entry.notes
    body = git(repo, "log", "-1", "--format=%B", "wf/cache")
    assert "\nCodemod notes:\n" in body
    assert "- heatgrid/env.py: imports left unused removed: wp\n" in body
