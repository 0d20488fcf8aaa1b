"""Output hashing leaves Warp's own timing lines out and never holds a large output in memory."""

from warp_fix.probe.output import HEAD_BYTES, MAX_NUMBERS, OutputDigest, Tail, merge_profiles

WARP_NOISE = (
    b"Warp 1.19.0 initialized:\n"
    b"   CUDA Toolkit 13.4, CUDA driver not available\n"
    b"   Kernel cache:\n"
    b"     /tmp/warp-fix-abc/warp-cache/1.19.0\n"
    b"Module __main__ 942edbe load on device 'cpu' took 4024.32 ms  (compiled)\n"
)


def digest(*chunks: bytes) -> OutputDigest:
    d = OutputDigest()
    for chunk in chunks:
        d.feed(chunk)
    d.close()
    return d


def test_warp_log_lines_do_not_change_the_hash():
    assert digest(WARP_NOISE + b"energy 1.5\n").sha256 == digest(b"energy 1.5\n").sha256


def test_program_output_changes_the_hash():
    assert digest(b"energy 1.5\n").sha256 != digest(b"energy 1.6\n").sha256


def test_chunk_boundaries_do_not_matter():
    text = WARP_NOISE + b"a\nb\nc\n"
    assert digest(text).sha256 == digest(*[text[i : i + 7] for i in range(0, len(text), 7)]).sha256


def test_module_load_lines_are_kept_for_the_log_fallback():
    assert digest(WARP_NOISE).log_lines == [
        "Module __main__ 942edbe load on device 'cpu' took 4024.32 ms  (compiled)"
    ]


def test_head_is_capped_and_bytes_are_counted():
    d = digest(*[b"x" * 1000 + b"\n"] * 1000)
    assert d.bytes == 1001 * 1000
    assert len(d.head) == HEAD_BYTES


def test_a_line_without_newline_does_not_grow_without_bound():
    d = OutputDigest()
    for _ in range(100):
        d.feed(b"y" * 100_000)
    assert len(d._pending) < 200_000


def test_private_paths_are_normalised():
    a = OutputDigest({b"/tmp/warp-fix-1": b"<private>"})
    b = OutputDigest({b"/tmp/warp-fix-2": b"<private>"})
    a.feed(b"cache at /tmp/warp-fix-1/x\n")
    b.feed(b"cache at /tmp/warp-fix-2/x\n")
    assert a.sha256 == b.sha256


def test_tail_keeps_the_end():
    tail = Tail(limit=10)
    for chunk in (b"0123456789", b"abcdef", b"XYZ"):
        tail.feed(chunk)
    assert tail.text() == "89abcdefXYZ"[-10:]


def profile_of(text: bytes):
    return digest(text).profile()


def numbers(text: bytes) -> list[str]:
    return profile_of(text).tokens()


def test_numbers_stand_alone_and_may_carry_a_unit():
    assert numbers(b"step took 12.31 ms\n") == ["12.31"]
    assert numbers(b"a=-3 [1. 2. 3.] (.25, 6.02e+23) 12.5ms 4x sum 3.5.\n") == [
        "-3", "1.", "2.", "3.", ".25", "6.02e+23", "12.5", "4", "3.5"
    ]


def test_identifiers_hashes_and_versions_are_text():
    assert numbers(b"sm_90 x1 v.2 3f2a9c deadbeef01 warp 1.19.0 nan inf\n") == []


def test_skeleton_ignores_numbers_but_not_text():
    assert profile_of(b"sum 1.5\n").skeleton_sha256 == profile_of(b"sum 1.25\n").skeleton_sha256
    assert profile_of(b"sum 1.5\n").skeleton_sha256 != profile_of(b"total 1.5\n").skeleton_sha256
    assert profile_of(b"sum 1.5\n").skeleton_sha256 != profile_of(b"sum 1.5 2\n").skeleton_sha256


def test_numbers_know_their_line_and_warp_lines_are_not_counted():
    profile = profile_of(WARP_NOISE + b"header\nsum 1.5\nsteps 3 of 4\n")
    assert [(x.line, x.numbers, x.text) for x in profile.lines] == [(2, 1, "sum 1.5"), (3, 2, "steps 3 of 4")]


def test_numbers_beyond_the_cap_are_a_digest():
    text = b"".join(b"value %d\n" % i for i in range(MAX_NUMBERS + 10))
    profile = profile_of(text)
    assert len(profile.tokens()) == MAX_NUMBERS and profile.numbers_total == MAX_NUMBERS + 10
    changed = profile_of(text.replace(b"value %d\n" % (MAX_NUMBERS + 5), b"value -1\n"))
    assert changed.rest_sha256 != profile.rest_sha256 and changed.skeleton_sha256 == profile.skeleton_sha256


def test_an_over_long_line_is_cut_between_numbers():
    line = b" ".join(b"%d.25" % i for i in range(40_000)) + b"\n"
    whole, pieces = digest(line), OutputDigest()
    for i in range(0, len(line), 1000):
        pieces.feed(line[i : i + 1000])
    pieces.close()
    assert pieces.profile() == whole.profile()
    assert pieces.profile().tokens()[:2] == ["0.25", "1.25"]


def test_merged_runs_keep_the_spread_of_each_varying_number():
    runs = [b"n 100000\nsum 5234.1294\nstep took %s ms\n" % t for t in (b"3512.20", b"1.83", b"3498.71", b"1.79")]
    runs[1] = runs[1].replace(b"5234.1294", b"5234.1302")
    merged = merge_profiles([profile_of(r) for r in runs], [r.decode() for r in runs])
    assert merged.text_difference == "" and merged.runs == 4
    assert [(s.index, s.low, s.high) for s in merged.spreads] == [(1, 5234.1294, 5234.1302), (2, 1.79, 3512.2)]


def test_merged_runs_name_the_first_line_whose_text_differs():
    runs = [b"id 7\nrun alpha\n", b"id 8\nrun beta\n"]
    merged = merge_profiles([profile_of(r) for r in runs], [r.decode() for r in runs])
    assert merged.text_difference == "line 2: 'run alpha' vs 'run beta'"


def test_module_load_lines_indented_by_a_scoped_timer_are_warp_lines_too():
    load = b"    Module timed.heat 185d206 load on device 'cpu' took 8567.74 ms  (compiled)\n"
    d = digest(WARP_NOISE.split(b"Module")[0] + load + b"first step took 8568.80 ms\n")
    assert d.log_lines == ["Module timed.heat 185d206 load on device 'cpu' took 8567.74 ms  (compiled)"]
    assert d.head == "first step took 8568.80 ms\n"
