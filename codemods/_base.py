"""Shared plumbing: the refusal exception, self-documenting examples and the command base class."""

from __future__ import annotations

import argparse
import inspect
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext

from ._cst import FILE_QUOTE, SourceLines, clear_shells, module_code, preferred_quote, shell_notes, with_warp_import
from ._partial import Focus
from .specs import Arg, CodemodArgs, CodemodRefused


@dataclass(frozen=True)
class Example:
    """A documented transformation: `before` becomes `after` under `args` (also a test case)."""

    before: str
    after: str
    args: dict[str, Any]
    title: str = ""
    #: the messages of the notes the codemod reports on `before` (see `Note`)
    notes: tuple[str, ...] = ()
    #: `before` reads like a file of a real project (module docstring, isort-sorted stdlib, third-party and
    #: first-party imports, the project's own Warp spelling and quotes): the toy snippets show the edit, this
    #: one shows it leaves such a file merge-ready (tests/codemods/test_codemod_lint.py)
    project_style: bool = False


@dataclass(frozen=True)
class Note:
    """Something the edit made stale and left in place, or cleaned up on the side (an import it removed):
    facts for the commit body, since the change itself does not show them.

    kind: "unused-parameter" | "stale-docstring" | "removed-import" | "removed-helper" | "kept-helper"
      | "emptied-function" | "removed-comment" | "removed-binding"
    """

    kind: str
    message: str
    file: str = ""
    function: str = ""  # the function it is about (its docstring, its parameter), when it is about one


@dataclass(frozen=True)
class Refusal:
    """A documented refusal: `before` under `args` raises CodemodRefused whose message contains `reason`."""

    before: str
    args: dict[str, Any]
    reason: str


class WarpCodemod(CodemodCommand):
    """Base of every warp-fix codemod: declared arguments, validation, and the file/args split.

    Subclasses declare `NAME`, `DESCRIPTION`, `ARGS_TYPE`, `EXAMPLES`, `REFUSALS` and implement
    `transform_module_impl`. Arguments are keyword arguments of `__init__` (that is what
    `python -m libcst.tool codemod` passes), validated against `ARGS`: the command's arguments for one
    file, which `ARGS_TYPE.by_file` gives for each file a place edits. `ARGS` and the `args:` list that ends
    the class's docstring are derived from `ARGS_TYPE`'s fields, the one place the arguments are declared.
    """

    NAME: ClassVar[str] = ""
    ARGS: ClassVar[tuple[Arg, ...]] = ()
    #: one place of the edit, typed, with the codemod's traits (codemods/specs.py)
    ARGS_TYPE: ClassVar[type[CodemodArgs]]
    EXAMPLES: ClassVar[tuple[Example, ...]] = ()
    REFUSALS: ClassVar[tuple[Refusal, ...]] = ()

    #: source of what the reduced module of a large file leaves out (codemods/_partial.py), for checks
    #: that count words over the whole file; empty when the codemod sees the whole file
    elided_text: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "ARGS_TYPE" in cls.__dict__:
            cls.ARGS = cls.ARGS_TYPE.command_args()
            cls.__doc__ = f"{inspect.cleandoc(cls.__doc__ or '')}\n\n{cls.ARGS_TYPE.describe()}"

    @classmethod
    def cli_usage(cls) -> str:
        """How `python -m libcst.tool codemod` runs the command on a file (an optional argument in brackets)."""
        words = [f"python -m libcst.tool codemod {cls.__module__.removeprefix('codemods.')}.{cls.__name__} FILE"]
        for a in cls.ARGS:
            value = {"int": "N", "strs": "X [X ...]", "json": "JSON"}.get(a.kind, "X")
            words.append(f"--{a.name} {value}" if a.required else f"[--{a.name} {value}]")
        return " ".join(words)

    @classmethod
    def focus(cls, kwargs: dict[str, Any]) -> Focus:
        """What the codemod reads of a large file (see `Focus`): by default the top-level statements
        that import or mention its arguments, keywords or lines."""
        return Focus.of(kwargs)

    def __init__(self, context: CodemodContext, **args: Any) -> None:
        super().__init__(context)
        known = {a.name: a for a in self.ARGS}
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise CodemodRefused(f"{self.NAME}: unknown argument(s) {unknown}; expected {sorted(known)}")
        self.args: dict[str, Any] = {}
        for a in self.ARGS:
            value = args.get(a.name)
            if value is None:
                if a.required:
                    raise CodemodRefused(f"{self.NAME}: missing required argument {a.name!r}")
                value = a.default
            self.args[a.name] = value
        self.notes: list[Note] = []

    @classmethod
    def add_args(cls, arg_parser: argparse.ArgumentParser) -> None:  # type: ignore[override]
        for a in cls.ARGS:
            flag = "--" + a.name
            if a.kind == "int":
                arg_parser.add_argument(flag, type=int, help=a.help, default=None)
            elif a.kind == "strs":
                arg_parser.add_argument(flag, nargs="+", help=a.help, default=None)
            elif a.kind == "json":
                arg_parser.add_argument(flag, type=json.loads, help=a.help + " (JSON)", default=None)
            else:
                arg_parser.add_argument(flag, type=str, help=a.help, default=None)

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module) -> Iterator[cst.Module]:
        """Like libcst's, without the defensive deep copy of the tree (nodes are immutable; the copy
        dominated the run time); metadata is resolved lazily through `self.context.wrapper`."""
        old = self.context.wrapper
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        self.context = replace(self.context, wrapper=wrapper)
        try:
            yield wrapper.module
        finally:
            self.context = replace(self.context, wrapper=old)

    #: per top-level statement code and lines of the module being transformed (see `SourceLines`)
    lines: SourceLines

    def transform_module(self, tree: cst.Module) -> cst.Module:
        quote = FILE_QUOTE.set(preferred_quote(tree))  # string_arg writes in the file's own quotes
        try:
            return self._transform(tree)
        finally:
            FILE_QUOTE.reset(quote)

    def _transform(self, tree: cst.Module) -> cst.Module:
        self.lines = SourceLines(tree)
        self.needs_warp_import = False  # set by `ensure_warp_alias` when the file only has `from warp import`
        result = super().transform_module(tree)
        if self.needs_warp_import and result is not tree:
            result = with_warp_import(result)
        if result is not tree and _starts_with_blank_line(result) and not _starts_with_blank_line(tree):
            first = result.body[0]
            kept = [line for line in first.leading_lines if line.comment is not None]
            result = result.with_changes(body=[first.with_changes(leading_lines=kept), *result.body[1:]])
        return result

    def code_of(self, tree: cst.Module) -> str:
        """`tree.code`, reusing the code of the statements of the transformed module left untouched."""
        lines = getattr(self, "lines", None)
        return module_code(tree, lines)

    def _whole_file_needed_for(self, names: set[str]) -> None:
        """Refuses the reduced module of a large file (see `_partial`) when the parts it leaves out mention
        one of `names`: the edit must see every use; the codemod then runs on the whole file."""
        mentioned = sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", self.elided_text))
        if mentioned:
            raise self.refuse(f"{', '.join(mentioned)} used in parts of the file not read")

    def clear_emptied_functions(self, tree: cst.Module, emptied: set[str], comment: str, work: str) -> cst.Module:
        """Functions the edit left without statements: a private one only called goes, with its calls; any other
        keeps a `comment` saying where its work went (see `clear_shells`), and the notes say which, `work` naming
        what a kept docstring still describes."""
        if not emptied:
            return tree
        self._whole_file_needed_for(emptied)
        tree, shells = clear_shells(tree, emptied, self.code_of(tree) + self.elided_text, comment)
        for kind, message, function in shell_notes(shells, work):
            self.note(kind, message, function)
        return tree

    def refuse(self, message: str) -> CodemodRefused:
        return CodemodRefused(f"{self.NAME}: {message}")

    def note(self, kind: str, message: str, function: str = "") -> None:
        """Reports a leftover (see `Note`) once."""
        if all(n.message != message for n in self.notes):
            self.notes.append(Note(kind, message, function=function))


def _starts_with_blank_line(tree: cst.Module) -> bool:
    """True when the file's first line is blank (removing the first statement can leave one behind)."""
    if tree.header:
        return tree.header[0].comment is None
    return bool(tree.body and tree.body[0].leading_lines and tree.body[0].leading_lines[0].comment is None)
