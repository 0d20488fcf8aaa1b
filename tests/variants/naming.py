"""The naming family: the same call with its arguments passed another way."""

from __future__ import annotations

import libcst as cst

from tests.variants.names import module_level_warp_alias
from tests.variants.transform import Example, Fixture, Transformation

# wp.launch(kernel, dim, inputs, outputs, ...): the parameters after the kernel, in order.
LAUNCH_PARAMETERS = ("dim", "inputs", "outputs")


def _is_launch(call: cst.Call, alias: str) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) == (alias, "launch")
    )


class _Positional(cst.CSTTransformer):
    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not _is_launch(original_node, self.alias):
            return updated_node
        args = list(updated_node.args)
        if not args or args[0].keyword is not None or any(a.star for a in args):
            return updated_node
        positional, keywords = [args[0]], args[1:]
        if any(a.keyword is None for a in keywords):
            return updated_node
        for name in LAUNCH_PARAMETERS:
            found = next((a for a in keywords if a.keyword.value == name), None)
            if found is None:
                break
            keywords.remove(found)
            positional.append(found.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
        if len(positional) == 1:
            return updated_node
        rebuilt = [*positional, *keywords]
        # each argument keeps the comma (and the whitespace after it) of the slot it now fills
        rebuilt = [arg.with_changes(comma=slot.comma) for arg, slot in zip(rebuilt, args)]
        return updated_node.with_changes(args=rebuilt)


class PositionalLaunchArguments(Transformation):
    NAME = "positional-launch"
    FAMILY = "naming"
    DESCRIPTION = "`wp.launch(k, dim=n, inputs=[...])` passes dim, inputs and outputs by position."
    NOTHING_TO_REWRITE = "no wp.launch passes dim by keyword"
    EXAMPLES = (
        Example(
            before="import warp as wp\n\nwp.launch(k, dim=n, inputs=[a], device=d)\n",
            after="import warp as wp\n\nwp.launch(k, n, [a], device=d)\n",
        ),
        Example(
            before="import warp as wp\n\nwp.launch(k, inputs=[a], dim=n, outputs=[b])\n",
            after="import warp as wp\n\nwp.launch(k, n, [a], [b])\n",
        ),
        # the kernel passed by keyword: nothing can go before it by position
        Example(
            before="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        alias = module_level_warp_alias(module.code)
        return module.visit(_Positional(alias)) if alias is not None else None


class _Keywords(cst.CSTTransformer):
    def __init__(self, alias: str) -> None:
        self.alias = alias

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not _is_launch(original_node, self.alias):
            return updated_node
        args = list(updated_node.args)
        positional = [a for a in args if a.keyword is None]
        if any(a.star for a in args) or not positional or len(positional) > 1 + len(LAUNCH_PARAMETERS):
            return updated_node
        names = ("kernel", *LAUNCH_PARAMETERS)
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        named = [
            arg.with_changes(keyword=cst.Name(names[i]), equal=equal) if arg.keyword is None else arg
            for i, arg in enumerate(args)
        ]
        return updated_node.with_changes(args=named)


class KeywordLaunchArguments(Transformation):
    NAME = "keyword-launch"
    FAMILY = "naming"
    DESCRIPTION = "`wp.launch(k, n, [...])` names every argument: `wp.launch(kernel=k, dim=n, inputs=[...])`."
    NOTHING_TO_REWRITE = "no wp.launch passes an argument by position"
    EXAMPLES = (
        Example(
            before="import warp as wp\n\nwp.launch(k, n, [a], device=d)\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a], device=d)\n",
        ),
        Example(
            before="import warp as wp\n\nwp.launch(k, dim=n, inputs=[a])\n",
            after="import warp as wp\n\nwp.launch(kernel=k, dim=n, inputs=[a])\n",
        ),
        # arguments unpacked from a sequence cannot be named
        Example(
            before="import warp as wp\n\nwp.launch(*args)\n",
            after="import warp as wp\n\nwp.launch(*args)\n",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        alias = module_level_warp_alias(module.code)
        return module.visit(_Keywords(alias)) if alias is not None else None
