"""Streams a child's output: hashes it, keeps the head, and never holds it all in memory.

Warp's own log lines (the init banner, "Module ... load ... took N ms") carry
timings and temp paths that change every run, so they are left out of the hash:
the program's output is what the program printed, not what Warp logged.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 16 * 1024
MAX_LINE = 64 * 1024

_MODULE_LOAD = re.compile(rb"^Module \S+ (?:[0-9a-f]+ )?load on device '[^']*' took [\d.]+ ms")
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

    def feed(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line + b"\n")
        if len(self._pending) > MAX_LINE:  # no newline in sight: pass it through unfiltered
            self._keep(self._pending)
            self._pending = b""

    def close(self) -> None:
        if self._pending:
            self._line(self._pending)
            self._pending = b""

    def _line(self, line: bytes) -> None:
        if self._in_banner and line.startswith(b" "):
            return
        self._in_banner = bool(_BANNER.match(line))
        if self._in_banner or _CUDA_WARNING.match(line):
            return
        if _MODULE_LOAD.match(line):
            if len(self.log_lines) < 10000:
                self.log_lines.append(line.decode("utf-8", "replace").rstrip())
            return
        self._keep(line)

    def _keep(self, data: bytes) -> None:
        for old, new in self._replace.items():
            data = data.replace(old, new)
        self._sha.update(data)
        room = HEAD_BYTES - len(self._head)
        if room > 0:
            self._head += data[:room]

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()

    @property
    def head(self) -> str:
        return self._head.decode("utf-8", "replace")


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
