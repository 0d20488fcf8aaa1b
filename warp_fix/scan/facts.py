"""What the scan learns from one file, kept apart from every other file's, so it can be reused when the file is not.

A file's facts depend only on its text and on where it sits (its name, its Python module, whether it is in the
repository, the project's top-level names): `FileFacts` holds them, the scanner makes one per file, and
`FactsAssembler` joins them into the SourceIndex in the order a scan of the whole tree has always produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .index import EntryPoint, SourceFile, SourceIndex, ValueRead
from .serialization import from_dict

# Parsed files join their items to the index in groups of this many (the batches in which their names were
# resolved when the scan was one pass): the order of the index's lists follows it, so it stays fixed.
BATCH_SIZE = 200
_NOT_ITEMS = ("root", "library_roots", "files", "warnings", "schema_version")
ITEM_LISTS = [f.name for f in fields(SourceIndex) if f.name not in _NOT_ITEMS]


@dataclass
class FileFacts:
    """One file's part of the index.

    `listed`, `entry_points`, `warnings` and `value_reads` come from reading the file (a file the prefilter skips has
    only these);
    `parsed` says it was parsed, and then `items` holds what the collectors found (None when they failed, said in
    `collect_warnings`).
    """

    listed: SourceFile | None = None
    entry_points: list[EntryPoint] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    value_reads: list[ValueRead] = field(default_factory=list)
    parsed: bool = False
    items: SourceIndex | None = None
    collect_warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileFacts:
        return from_dict(cls, data)


class FactsAssembler:
    """Adds files' facts to an index in discovery order: what reading found at once, parsed items per batch."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._batch: list[FileFacts] = []

    def add(self, facts: FileFacts) -> None:
        if facts.listed is not None:
            self.index.files.append(facts.listed)
        self.index.entry_points += facts.entry_points
        self.index.warnings += facts.warnings
        self.index.value_reads += facts.value_reads
        if facts.parsed:
            self._batch.append(facts)
            if len(self._batch) >= BATCH_SIZE:
                self.flush()

    def flush(self) -> None:
        for facts in self._batch:
            self.index.warnings += facts.collect_warnings
            if facts.items is not None:
                for name in ITEM_LISTS:
                    getattr(self.index, name).extend(getattr(facts.items, name))
        self._batch = []
