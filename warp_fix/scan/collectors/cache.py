"""Statements that stop Warp's or the CUDA driver's cache from being reused (mechanism CS-2)."""

from __future__ import annotations

import ast

from ..index import CacheOperation, Value
from ..parsed import argument, first_docstring_line, maintenance_guard, string_literal
from .base import Collector
from .config import config_key

CACHE_CLEARING_CALLS = frozenset({"clear_kernel_cache", "clear_lto_cache"})
CACHE_CONFIG_KEYS = frozenset({"cache_kernels", "kernel_cache_dir"})
CACHE_ENVIRONMENT_VARIABLES = frozenset(
    {"CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "WARP_CACHE_PATH"}
)
ENVIRON = "os.environ"


class CacheOperationCollector(Collector):
    """Finds cache clears and cache-defeating settings, with the guard and function around each."""

    NODE_TYPES = (ast.Call, ast.Assign)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self._visit_call(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._visit_assignment(node, target)

    def _visit_call(self, node: ast.Call) -> None:
        symbol = self.parsed.warp_symbol(node.func)
        if symbol in CACHE_CLEARING_CALLS:
            self._append(node, symbol)
            return
        names = self.parsed.qualified_names(node.func)
        if "os.putenv" in names or f"{ENVIRON}.setdefault" in names:
            self._record_environment(node, argument(node, "key", 0), argument(node, "value", 1))
        elif f"{ENVIRON}.update" in names and node.args and isinstance(node.args[0], ast.Dict):
            for key, value in zip(node.args[0].keys, node.args[0].values, strict=True):
                self._record_environment(node, key, value)
        elif "shutil.rmtree" in names and node.args and _mentions_cache_dir(self.parsed.source(node.args[0])):
            self._append(node, "rmtree.kernel_cache_dir", self.parsed.value(node.args[0]))

    def _visit_assignment(self, node: ast.Assign, target: ast.expr) -> None:
        key = config_key(self.parsed, target)
        if key in CACHE_CONFIG_KEYS:
            self._append(node, f"config.{key}", self.parsed.value(node.value))
        elif isinstance(target, ast.Subscript) and ENVIRON in self.parsed.qualified_names(target.value):
            self._record_environment(node, target.slice, node.value)

    def _record_environment(self, node: ast.AST, key: ast.expr | None, value: ast.expr | None) -> None:
        name = string_literal(key)
        if name in CACHE_ENVIRONMENT_VARIABLES:
            self._append(node, f"env.{name}", self.parsed.value(value))

    def _append(self, node: ast.AST, kind: str, value: Value | None = None) -> None:
        guards = self.parsed.guards(node)
        self.found.cache_operations.append(
            CacheOperation(
                **self.parsed.located(node),
                kind=kind,
                value=value,
                function_doc=first_docstring_line(self.parsed.innermost_function(node)),
                guards=guards,
                maintenance_guard=maintenance_guard(guards),
            )
        )


def _mentions_cache_dir(source: str) -> bool:
    return "kernel_cache_dir" in source or "WARP_CACHE_PATH" in source
