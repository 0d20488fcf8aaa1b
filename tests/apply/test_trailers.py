"""The Warp-Fix-* trailers: what a commit records is what `warp-fix log` reads back, through one codec."""

from __future__ import annotations

import subprocess

from hypothesis import given
from hypothesis import strategies as st

from tests.apply.conftest import git, init_repo
from warp_fix.apply.commit import commit_files
from warp_fix.apply.git import Git
from warp_fix.apply.review import branch_log
from warp_fix.apply.trailers import Change, CommitTrailers, TrailerCodec
from warp_fix.metrics import COLD_MODULE, COMPILE_ELAPSED, IDENTITIES, KERNEL, LTO_BUILDS, TRAILED, Metric

WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,30}[A-Za-z0-9]", fullmatch=True)


def written(metric: Metric):
    """Values as a trailer writes them (whole counts, milliseconds to useful precision)."""
    number = st.integers(0, 10**7) if not metric.timing else st.floats(0, 1e6, allow_nan=False)
    return number.map(lambda value: float(metric.format(value)))


changes = st.fixed_dictionaries(
    {},
    optional={metric: st.one_of(st.none(), st.builds(Change, written(metric), written(metric))) for metric in TRAILED},
)
records = st.builds(
    CommitTrailers,
    mechanism=st.from_regex(r"[a-z][a-z-]{0,30}", fullmatch=True),
    fix=st.from_regex(r"F[0-9]{1,3}", fullmatch=True),
    verdict=st.sampled_from(["IMPROVED", "INCONCLUSIVE"]),
    per_arm=st.integers(1, 50),
    changes=changes,
    output=st.one_of(st.just(""), WORD),
    side_by_side=st.booleans(),
)


@given(records)
def test_what_is_encoded_decodes_to_the_same_record(record):
    assert TrailerCodec.decode(TrailerCodec.encode(record)) == record


def test_the_trailers_read_like_this():
    record = CommitTrailers(
        "mathdx-lto",
        "F2",
        "IMPROVED",
        3,
        {COLD_MODULE: Change(9000, 7000), COMPILE_ELAPSED: None, KERNEL: Change(1.84, 1.5), LTO_BUILDS: Change(3, 2)},
        "identical",
    )
    assert TrailerCodec.encode(record).splitlines() == [
        "Warp-Fix-Mechanism: mathdx-lto",
        "Warp-Fix-Fix: F2",
        "Warp-Fix-Verdict: IMPROVED",
        "Warp-Fix-Cold-Module-Ms: 9000 -> 7000",
        "Warp-Fix-Compile-Elapsed-Ms: n/a",
        "Warp-Fix-Kernel-Ms: 1.84 -> 1.5",
        "Warp-Fix-LTO-Builds: 3 -> 2",
        "Warp-Fix-Samples: 3 per arm, interleaved",
        "Warp-Fix-Output: identical",
    ]


def test_a_commit_kept_on_counts_against_reused_runs_says_so_in_its_samples_trailer():
    record = CommitTrailers("unused-backward", "F1", "IMPROVED", 1, {}, side_by_side=False)
    assert "Warp-Fix-Samples: 1 per arm, earlier runs reused for the code without the fix" in TrailerCodec.encode(
        record
    ).splitlines()


def test_a_commit_without_a_mechanism_is_not_apply_s_and_a_hand_edited_value_is_left_out():
    assert TrailerCodec.decode("Signed-off-by: A <a@b>") is None
    record = TrailerCodec.decode("Warp-Fix-Mechanism: m\nWarp-Fix-Identities: four -> 3\nWarp-Fix-Kernel-Ms: 2 -> 1")
    assert record is not None and record.changes == {KERNEL: Change(2, 1)}


def test_git_reads_the_trailers_as_written(tmp_path):
    message = "Subject\n\nBody.\n\n" + TrailerCodec.encode(CommitTrailers("m", "F1", "IMPROVED", 1, {}))
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, text=True, capture_output=True, check=True
    ).stdout
    assert TrailerCodec.decode(parsed) == CommitTrailers("m", "F1", "IMPROVED", 1, {})


def test_log_totals_lto_builds_and_kernel_time_from_the_commits(tmp_path):
    """The MathDx fixes are kept on LTO builds and kernel time: `warp-fix log` totals both."""
    repo = init_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "wf/mathdx")
    for value, lto, kernel in ((2, Change(3, 2), Change(1.84, 1.5)), (3, Change(2, 0), Change(1.6, 1.2))):
        (repo / "a.py").write_text(f"x = {value}\n")
        trailers = CommitTrailers("mathdx-lto", f"F{value}", "IMPROVED", 3, {LTO_BUILDS: lto, KERNEL: kernel})
        commit_files(Git(repo), ["a.py"], f"Fix {value}\n\n{TrailerCodec.encode(trailers)}\n")
    git(repo, "checkout", "-q", "main")
    log = branch_log(repo, "wf/mathdx")
    totals = log.totals()
    assert totals[LTO_BUILDS] == (3, 0) and totals[KERNEL][0] == 1.84 and round(totals[KERNEL][1], 6) == 1.1
    assert IDENTITIES not in totals  # not recorded, not invented
    assert log.to_json()["totals"]["LTO-Builds"] == [3, 0]
