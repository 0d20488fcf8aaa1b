"""Streams a child's output: hashes it, profiles its numbers, keeps the head, never holds it all in memory.

Warp's own log lines (the init banner, "Module ... load ... took N ms") carry
timings and temp paths that change every run, so they are left out of the hash:
the program's output is what the program printed, not what Warp logged.

Programs also print numbers that vary on their own (a sum over GPU atomics, a
`wp.ScopedTimer` duration), so each run also yields an OutputProfile: the text
with every number replaced by a placeholder (hashed over all the output), and
the numbers by position for the first MAX_NUMBERS of them. What is a number:

- an int or float literal with optional sign and exponent (`3`, `-0.5`, `1.`,
  `.25`, `6.02e+23`), standing on its own: not glued to a letter, digit, `_` or
  `.` in front (`sm_90`, `x1`, `v.2` are text);
- it may carry a unit of letters behind it (`12.5ms`, `4x`), but not a word
  that goes on with digits (`3f2a9c`, a hex hash, is text), nor another `.digit`
  (`1.19.0`, a version, is text);
- `nan` and `inf` are text.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque

from warp_fix.report import NumberSpread, OutputLine, OutputProfile

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 16 * 1024
MAX_LINE = 64 * 1024
MAX_NUMBERS = 20_000  # numbers kept by position; later ones are compared through a digest of their tokens
MAX_NUMBER_LINES = 2_000  # lines whose text is kept to show their numbers in context (later ones: number only)
LINE_TEXT = 160

NUMBER = re.compile(rb"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?!\w*\d)(?!\.\d)")
_NUMBER_GROUP = re.compile(b"(" + NUMBER.pattern + b")")  # split() then yields text, number, text, ...
_DIGITS = tuple(b"0123456789")
PLACEHOLDER = b"\x00"  # stands for a number in the skeleton (program output rarely holds a NUL byte)

# Inside a wp.ScopedTimer, Warp indents its module-load lines by the timer's depth.
_MODULE_LOAD = re.compile(rb"^ *Module \S+ (?:[0-9a-f]+ )?load on device '[^']*' took [\d.]+ ms")
_BANNER = re.compile(rb"^Warp \S+ initialized:")
_CUDA_WARNING = re.compile(rb"^Warp CUDA warning:")


class OutputDigest:
    """Line-filtered sha256, byte count and head of a stream, fed in chunks."""

    def __init__(self, replace: dict[bytes, bytes] | None = None):
        self._sha = hashlib.sha256()
        self._head = bytearray()
        self._pending = b""
        self._in_banner = False
        self._replace = replace or {}
        self.bytes = 0
        self.log_lines: list[str] = []  # Warp's module-load lines, for the log-parsing fallback
        self._numbers = NumberProfiler()

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line + b"\n")
        if len(self._pending) > MAX_LINE:  # no newline in sight: pass it through unfiltered
            cut = _last_break(self._pending) + 1 or len(self._pending)
            self._keep(self._pending[:cut])
            self._pending = self._pending[cut:]

    def close(self) -> None:
        if self._pending:
            self._line(self._pending)
            self._pending = b""

    def _line(self, line: bytes) -> None:
        if _MODULE_LOAD.match(line):  # first: indented, it would pass for a line of the banner
            self._in_banner = False
            if len(self.log_lines) < 10000:
                self.log_lines.append(line.decode("utf-8", "replace").strip())
            return
        if self._in_banner and line.startswith(b" "):
            return
        self._in_banner = bool(_BANNER.match(line))
        if self._in_banner or _CUDA_WARNING.match(line):
            return
        self._keep(line)

    def _keep(self, data: bytes) -> None:
        for old, new in self._replace.items():
            data = data.replace(old, new)
        self._sha.update(data)
        self._numbers.feed(data)
        room = HEAD_BYTES - len(self._head)
        if room > 0:
            self._head += data[:room]

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()

    @property
    def head(self) -> str:
        return self._head.decode("utf-8", "replace")

    def profile(self) -> OutputProfile:
        return self._numbers.profile()


class NumberProfiler:
    """Skeleton hash over every line, and the first MAX_NUMBERS numbers with their line, fed line by line.

    A piece without a trailing newline (an over-long line cut at a blank) continues the same line. Once
    the cap is reached, the tokens go into the rest digest: with the same skeleton, equal digests mean
    equal numbers.
    """

    def __init__(self) -> None:
        self._skeleton = hashlib.sha256()
        self._rest = hashlib.sha256()
        self._tokens: list[bytes] = []
        self._lines: list[OutputLine] = []
        self._line = 1
        self._line_start: bytes | None = None  # the current line's first piece, for its text
        self._total = 0

    def feed(self, piece: bytes) -> None:
        if self._line_start is None:
            self._line_start = piece[: LINE_TEXT * 4]
        first = _first_digit(piece)
        if first < 0:
            self._skeleton.update(piece)
        else:
            # The text before the first digit holds no number: only a sign and a "." may precede the
            # digits, plus the one character the pattern looks behind at.
            start = max(0, first - 3)
            parts = _NUMBER_GROUP.split(piece[start:])
            self._skeleton.update(piece[:start] + PLACEHOLDER.join(parts[0::2]))
            tokens = parts[1::2]
            self._total += len(tokens)
            room = MAX_NUMBERS - len(self._tokens)
            for token in tokens[:room]:
                self._profile(token)
            if len(tokens) > room:
                self._rest.update(b" ".join(tokens[max(room, 0) :]) + b" ")
        if piece.endswith(b"\n"):
            self._line += 1
            self._line_start = None

    def _profile(self, token: bytes) -> None:
        if not self._lines or self._lines[-1].line != self._line:
            text = ""
            if len(self._lines) < MAX_NUMBER_LINES:
                text = (self._line_start or b"").decode("utf-8", "replace").rstrip("\n")[:LINE_TEXT]
            self._lines.append(OutputLine(self._line, 0, text))
        self._lines[-1].numbers += 1
        self._tokens.append(token)

    def profile(self) -> OutputProfile:
        return OutputProfile(
            skeleton_sha256=self._skeleton.hexdigest(),
            text_difference="",
            numbers=b" ".join(self._tokens).decode("ascii"),
            lines=[OutputLine(x.line, x.numbers, x.text) for x in self._lines],
            rest_sha256=self._rest.hexdigest(),
            rest_varies=False,
            numbers_total=self._total,
            runs=1,
        )


def _first_digit(data: bytes) -> int:
    """Index of the first ASCII digit, -1 if none: ten memchr scans beat the regex engine on long text."""
    found = [i for i in (data.find(d) for d in _DIGITS) if i >= 0]
    return min(found) if found else -1


def _last_break(data: bytes) -> int:
    """Index of the last blank or separator in `data` (-1 if none): a cut there splits no number."""
    return max(data.rfind(b" "), data.rfind(b"\t"), data.rfind(b","), data.rfind(b";"))


def skeleton(line: str) -> str:
    return NUMBER.sub(PLACEHOLDER, line.encode("utf-8", "surrogateescape")).decode("utf-8", "replace")


def first_text_difference(head_a: str, head_b: str) -> str:
    """The first line whose text (numbers aside) differs between two outputs, as `line N: 'a' vs 'b'`."""
    a_lines, b_lines = head_a.splitlines(), head_b.splitlines()
    for index in range(max(len(a_lines), len(b_lines))):
        a = a_lines[index] if index < len(a_lines) else ""
        b = b_lines[index] if index < len(b_lines) else ""
        if skeleton(a) != skeleton(b):
            return f"line {index + 1}: {_quote(a)} vs {_quote(b)}"
    return f"beyond the first {HEAD_BYTES // 1024} KiB"


def _quote(text: str) -> str:
    return repr(text[:LINE_TEXT]) if text else "(no line)"


def merge_profiles(profiles: list[OutputProfile], heads: list[str]) -> OutputProfile:
    """One profile over several runs (or already merged profiles): the first one's numbers are the reference.

    `heads` are the outputs' first 64 KiB, in the same order, to name the first differing line.
    """
    first = profiles[0]
    difference = first.text_difference
    for profile, head in zip(profiles[1:], heads[1:]):
        if not difference:
            difference = profile.text_difference
        if not difference and profile.skeleton_sha256 != first.skeleton_sha256:
            difference = first_text_difference(heads[0], head)
    spreads: dict[int, NumberSpread] = {}
    if not difference:
        reference = first.tokens()
        for profile in profiles:
            for index, token in enumerate(profile.tokens()):
                if token != reference[index]:
                    _widen(spreads, index, float(reference[index]), float(token))
            for spread in profile.spreads:
                _widen(spreads, spread.index, spread.low, spread.high)
    return OutputProfile(
        skeleton_sha256=first.skeleton_sha256,
        text_difference=difference,
        numbers=first.numbers,
        lines=first.lines,
        rest_sha256=first.rest_sha256,
        rest_varies=any(p.rest_varies or p.rest_sha256 != first.rest_sha256 for p in profiles),
        numbers_total=first.numbers_total,
        runs=sum(p.runs for p in profiles),
        spreads=sorted(spreads.values(), key=lambda s: s.index),
    )


def _widen(spreads: dict[int, NumberSpread], index: int, *values: float) -> None:
    spread = spreads.get(index)
    low, high = min(values), max(values)
    if spread is None:
        spreads[index] = NumberSpread(index, low, high)
    else:
        spread.low, spread.high = min(spread.low, low), max(spread.high, high)


class Tail:
    """The last few KiB of a stream (stderr), for error messages."""

    def __init__(self, limit: int = TAIL_BYTES):
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit

    def feed(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) > self._limit:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        return b"".join(self._chunks)[-self._limit :].decode("utf-8", "replace")
