"""Output hashing leaves Warp's own timing lines out and never holds a large output in memory."""

from warp_fix.probe.output import HEAD_BYTES, OutputDigest, Tail

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
