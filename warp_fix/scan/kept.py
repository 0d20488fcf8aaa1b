"""The source index kept between runs: each file's facts, keyed by a hash of its text and of where it sits.

A second plan of the same repository, and apply's re-plans after each kept fix, re-read only the files whose text
changed. The store is one file in the repository's warp-fix folder (`<git common dir>/warp-fix/`, where apply
keeps its ledgers), so every worktree of the repository shares it. It is written whole after each scan and holds
the files of that scan only (a deleted file is forgotten). Its first line names its format, version, the scanner
that wrote it (a hash of the scan package's own source and of Python's version) and a checksum of
the rest: a store that fails any of them, or does not load, is ignored and rewritten, never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from .facts import FileFacts

FORMAT = "warp-fix source index"
FORMAT_VERSION = 1
STORE_NAME = "source-index.json"


class KeptIndex:
    """Facts of files by key; `take` answers from what was loaded, `keep` records this scan's, `save` writes."""

    def __init__(self, path: Path | None, loaded: dict[str, dict[str, Any]] | None = None) -> None:
        self.path = path
        self._loaded = loaded or {}
        self._kept: dict[str, dict[str, Any]] = {}
        self.reused = 0  # files whose facts came from the store
        self.read = 0  # files parsed (or read) afresh
        self.rebuilt = False  # the store existed but was not trusted

    @classmethod
    def at(cls, path: Path) -> KeptIndex:
        """The store at `path`: loaded when it is whole and written by this scanner, else empty (and rebuilt)."""
        if not path.is_file():
            return cls(path)
        entries = _load(path)
        kept = cls(path, entries)
        kept.rebuilt = entries is None
        return kept

    @classmethod
    def of_repository(cls, root: Path) -> KeptIndex | None:
        """The store of the git repository whose top folder is `root`; None elsewhere (not a repository, a
        subfolder of one: plan's usual root is the repository's top, and only that one is kept)."""
        folder = warp_fix_folder(root)
        return cls.at(folder / STORE_NAME) if folder is not None else None

    @staticmethod
    def key(text: str, context: str) -> str:
        digest = hashlib.blake2b(digest_size=20)
        digest.update(f"{scanner_fingerprint()}\0{context}\0".encode())
        digest.update(text.encode("utf-8", errors="surrogatepass"))
        return digest.hexdigest()

    def take(self, key: str) -> FileFacts | None:
        data = self._loaded.get(key)
        if data is None:
            return None
        try:
            facts = FileFacts.from_dict(data)
        except (TypeError, ValueError, KeyError, AttributeError):
            return None
        self._kept[key] = data
        self.reused += 1
        return facts

    def keep(self, key: str, facts: FileFacts) -> None:
        self._kept[key] = asdict(facts)
        self.read += 1

    def save(self) -> None:
        """Write this scan's facts (atomically); a store that cannot be written only costs the next run time."""
        if self.path is None or (not self.read and self._kept.keys() == self._loaded.keys()):
            return  # nothing to write, or nothing changed
        payload = json.dumps(self._kept, separators=(",", ":"))
        header = {"format": FORMAT, "version": FORMAT_VERSION, "scanner": scanner_fingerprint(),
                  "checksum": _checksum(payload)}
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".source-index-", dir=self.path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(json.dumps(header) + "\n" + payload)
                os.replace(temporary, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)


def _load(path: Path) -> dict[str, dict[str, Any]] | None:
    """The store's entries, or None when it is not whole, not this format, or written by another scanner."""
    try:
        header_line, _, payload = path.read_text(encoding="utf-8").partition("\n")
        header = json.loads(header_line)
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return None
        if header.get("version") != FORMAT_VERSION or header.get("scanner") != scanner_fingerprint():
            return None
        if header.get("checksum") != _checksum(payload):
            return None
        entries = json.loads(payload)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
        return None
    return entries


def _checksum(payload: str) -> str:
    return hashlib.blake2b(payload.encode("utf-8", errors="surrogatepass"), digest_size=20).hexdigest()


@cache
def scanner_fingerprint() -> str:
    """Changes whenever what the scan would find could change: its own code, Python's version."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{sys.version_info[:2]}".encode())
    package = Path(__file__).resolve().parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def warp_fix_folder(root: Path) -> Path | None:
    """`<git common dir>/warp-fix` of the repository whose top folder is `root`; None when it is not one."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--git-common-dir"],
            cwd=root, capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 2:
        return None
    top, common = lines
    try:
        if Path(top).resolve() != Path(root).resolve():
            return None
    except OSError:
        return None
    return (Path(root) / common).resolve() / "warp-fix"
