"""Module-options changes: `set_module_options` and `get_module(name).options` updates."""

from __future__ import annotations

import ast
from typing import Any

from ..index import OptionCall
from ..parsed import argument, literal_of, string_literal
from .base import Collector


class OptionCallCollector(Collector):
    """Finds statements that change a Warp module's options, and the module each one targets."""

    NODE_TYPES = (ast.Call, ast.Assign)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._module_variables: dict[str, ast.Call] = {}  # "m" / "self.mod" -> its wp.get_module(...) call
        self._pending: list[tuple[ast.AST, str, ast.expr, ast.expr]] = []

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            self._visit_assign(node)
        elif isinstance(node, ast.Call):
            self._visit_call(node)

    def _visit_assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call) and self.parsed.warp_symbol(node.value.func) == "get_module":
            for target in node.targets:
                self._module_variables[self.parsed.source(target)] = node.value
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                receiver = _options_receiver(target.value)
                if receiver is not None:
                    entries = ast.Dict(keys=[target.slice], values=[node.value])
                    self._pending.append((node, "options.setitem", receiver, entries))

    def _visit_call(self, node: ast.Call) -> None:
        if self.parsed.warp_symbol(node.func) == "set_module_options":
            self._record_set_module_options(node)
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "update" and node.args:
            receiver = _options_receiver(node.func.value)
            if receiver is not None:
                self._pending.append((node, "options.update", receiver, node.args[0]))

    def finish(self) -> None:
        """Options updates need every `m = wp.get_module(..)` binding of the file first."""
        for node, kind, receiver, options in sorted(self._pending, key=lambda p: p[0].lineno):  # type: ignore[attr-defined]
            call = self._module_call(receiver)
            if call is None and not (isinstance(receiver, ast.Attribute) and receiver.attr == "module"):
                continue  # `.options` of something that is not a Warp module
            name = argument(call, "name", 0)
            if name is not None and _is_dunder_name(name):
                target = self.parsed.info.python_module
            else:
                target = string_literal(name)
            target_source = self.parsed.source(name if name is not None else receiver)
            source = self.parsed.source(node) if kind == "options.setitem" else None
            self._append(node, kind, target, target_source, options, source)

    def _record_set_module_options(self, call: ast.Call) -> None:
        options = argument(call, "options", 0)
        module = argument(call, "module", 1)
        if options is None:
            return
        caller = module is None or _is_dunder_name(module)
        target = self.parsed.info.python_module if caller else string_literal(module)
        module_source = self.parsed.source(module) if module is not None else None
        self._append(call, "set_module_options", target, module_source, options)

    def _append(
        self,
        node: ast.AST,
        kind: str,
        target: str | None,
        target_source: str | None,
        options: ast.expr,
        options_source: str | None = None,
    ) -> None:
        entries = _dict_entries(options, self.parsed.source)
        values: dict[str, Any] = {}
        non_constant: list[str] = []
        for key, value in (entries or {}).items():
            constant, literal = literal_of(value) if value is not None else (False, None)
            if constant:
                values[key] = literal
            else:
                non_constant.append(key)
        located = self.parsed.located(node)
        self.found.option_calls.append(
            OptionCall(
                **located,
                kind=kind,
                target_module=target,
                target_source=target_source,
                options_source=options_source or self.parsed.source(options),
                is_dict_literal=entries is not None,
                is_constant=entries is not None and not non_constant,
                values=values,
                non_constant_keys=non_constant,
                at_module_scope=located["function"] is None,
            )
        )

    def _module_call(self, receiver: ast.expr) -> ast.Call | None:
        if isinstance(receiver, ast.Call) and self.parsed.warp_symbol(receiver.func) == "get_module":
            return receiver
        return self._module_variables.get(self.parsed.source(receiver))


def _options_receiver(expression: ast.expr) -> ast.expr | None:
    """`X` of `X.options`, else None."""
    if isinstance(expression, ast.Attribute) and expression.attr == "options":
        return expression.value
    return None


def _is_dunder_name(expression: ast.expr) -> bool:
    return isinstance(expression, ast.Name) and expression.id == "__name__"


def _dict_entries(expression: ast.expr, source) -> dict[str, ast.expr | None] | None:
    """Keys -> value expressions of a `{...}` or `dict(...)` literal; None when it is neither.

    Keys that are not string literals, and `**spread` entries, map to None (non-constant).
    """
    if isinstance(expression, ast.Dict):
        entries: dict[str, ast.expr | None] = {}
        for key, value in zip(expression.keys, expression.values, strict=True):
            if key is None:
                entries[f"**{source(value)}"] = None
            elif string_literal(key) is not None:
                entries[string_literal(key)] = value  # type: ignore[index]
            else:
                entries[source(key)] = None
        return entries
    is_dict_call = isinstance(expression, ast.Call) and getattr(expression.func, "id", None) == "dict"
    if is_dict_call and isinstance(expression, ast.Call):
        if expression.args:
            return None
        return {(k.arg or f"**{source(k.value)}"): (k.value if k.arg else None) for k in expression.keywords}
    return None
