"""Kernel launch sites and explicit preloads (`force_load`, `load_module`)."""

from __future__ import annotations

import ast

from ..index import LaunchSite, PreloadCall
from ..parsed import argument
from ..receivers import Receivers
from .base import Collector

# Positions in warp-lang 1.19's signatures; launch_tiled forwards *args to launch.
LAUNCH_POSITIONS = {"kernel": 0, "device": 6, "adjoint": 8, "block_dim": 12}
PRELOAD_POSITIONS = {
    "force_load": {"device": 0, "modules": 1, "block_dim": 2, "max_workers": 3},
    "load_module": {"modules": 0, "device": 1, "block_dim": 3, "max_workers": 4},
}
PRELOAD_KEYWORDS = {"load_module": {"modules": "module"}}


class LaunchCollector(Collector):
    """Finds `wp.launch` / `wp.launch_tiled` calls and what they pass for kernel, device and block_dim."""

    NODE_TYPES = (ast.Call,)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Call)
        kind = self.parsed.launch_kind(node)
        if kind is None:
            return
        value = self.parsed.value
        kernel = argument(node, "kernel", LAUNCH_POSITIONS["kernel"])
        self.found.launches.append(
            LaunchSite(
                **self.parsed.located(node),
                kind=kind,
                kernel=self.parsed.source(kernel) if kernel is not None else "",
                block_dim=value(argument(node, "block_dim", LAUNCH_POSITIONS["block_dim"])),
                device=value(argument(node, "device", LAUNCH_POSITIONS["device"])),
                adjoint=value(argument(node, "adjoint", LAUNCH_POSITIONS["adjoint"])),
                **self._held_in(kernel, node),
            )
        )

    def _held_in(self, kernel: ast.expr | None, at: ast.AST) -> dict[str, str]:
        """For `wp.launch(self.step_kernel, ...)` in a method (written in the class body or bound there; the instance
        parameter never rebound): the attribute, `step_kernel`, and the class."""
        if not (isinstance(kernel, ast.Attribute) and isinstance(kernel.value, ast.Name)):
            return {}
        function = self.parsed.innermost_function(at)
        receivers = Receivers.of(self.parsed)
        holder = receivers.class_of_method(function) if function is not None else None
        if holder is None or function is None or receivers.self_name(function) != kernel.value.id:
            return {}
        if len(receivers.names_bound(function).get(kernel.value.id, [])) != 1:
            return {}
        return {"held_in": kernel.attr, "holder": holder}


class PreloadCollector(Collector):
    """Finds explicit module preloads, whose `max_workers` and `device` decide CS-8 / CS-13."""

    NODE_TYPES = (ast.Call,)

    def visit(self, node: ast.AST) -> None:
        assert isinstance(node, ast.Call)
        kind = self.parsed.warp_symbol(node.func)
        if kind not in PRELOAD_POSITIONS:
            return
        keywords = PRELOAD_KEYWORDS.get(kind, {})
        values = {
            name: self.parsed.value(argument(node, keywords.get(name, name), position))
            for name, position in PRELOAD_POSITIONS[kind].items()
        }
        self.found.preloads.append(PreloadCall(**self.parsed.located(node), kind=kind, **values))
