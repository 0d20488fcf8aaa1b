"""The collector protocol: each collector finds one kind of item while the scanner walks the tree once."""

from __future__ import annotations

import ast
from typing import ClassVar

from ..index import SourceIndex
from ..parsed import ParsedFile


class Collector:
    """Receives every node of `NODE_TYPES`, appends what it finds to `found`; `finish` runs at the end."""

    NODE_TYPES: ClassVar[tuple[type[ast.AST], ...]] = ()

    def __init__(self, parsed: ParsedFile, found: SourceIndex) -> None:
        self.parsed = parsed
        self.found = found

    def visit(self, node: ast.AST) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Called after the walk, for collectors that need the whole file first."""
