"""`bake verify` leaves what it measured beside apply's ledgers; apply quotes it for the same identities only."""

from __future__ import annotations

import json
import subprocess

from warp_fix.bake.verified import RECORDS, Verification, last_verification, remember

SIM = ("sim", "a" * 64, "cpu")
IO = ("io", "b" * 64, "cpu")


def verification(command=("python", "-m", "sim"), identities=(SIM, IO), compiled=0) -> Verification:
    at, keys = "2026-12-04 06:30", ("5d0592549740abc",)
    return Verification(tuple(command), frozenset(identities), compiled, 812.4, at, keys)


def test_a_verification_of_the_same_identities_is_quoted_with_its_figure():
    assert verification().said_for(frozenset({SIM, IO})) == (
        "a restored bake measured it: nothing compiled, the run took 812 ms (`warp-fix bake verify`, "
        "2026-12-04 06:30, key 5d0592549740)"
    )
    assert verification(compiled=1).said_for(frozenset({SIM})).startswith("a restored bake measured it: 1 compiled")


def test_a_verification_of_other_code_says_so_and_what_to_do():
    changed = ("sim", "c" * 64, "cpu")  # the fix moved sim's hash
    assert verification().said_for(frozenset({changed, IO})) == (
        "the last `warp-fix bake verify` (2026-12-04 06:30, key 5d0592549740) ran other code (1 of 2 identities "
        "differ): bake again once this branch is merged"
    )


def test_the_newest_record_of_the_same_command_is_read_and_a_broken_line_skipped(tmp_path):
    older, other, newer = verification(compiled=2), verification(command=("python", "x.py")), verification()
    lines = [older.to_json(), newer.to_json(), other.to_json()]
    (tmp_path / RECORDS).write_text("\n".join(map(json.dumps, lines)) + "\n{not json\n")
    assert last_verification(tmp_path, ["python", "-m", "sim"]) == newer
    assert last_verification(tmp_path, ["python", "-m", "other"]) is None
    assert last_verification(tmp_path / "none", ["python", "-m", "sim"]) is None


def test_records_are_kept_in_a_git_repository_only(tmp_path):
    remember(tmp_path, verification())  # not a repository: nothing written anywhere under it
    assert not any(tmp_path.rglob(RECORDS))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "app").mkdir()
    remember(tmp_path / "app", verification())
    assert last_verification(tmp_path / ".git" / "warp-fix", ["python", "-m", "sim"]) == verification()
