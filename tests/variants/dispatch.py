"""The dispatch family: the same choice of code written as a dict registry, an `if` chain or a `match`."""

from __future__ import annotations

import ast

import libcst as cst

from tests.variants.names import names_in
from tests.variants.transform import Example, Fixture, Skip, Transformation, Variant


def _string_cases(node: cst.If, subject: str | None = None) -> str | None:
    """The subject name of `if <name> == "literal":` (None: the test is of another shape or another name)."""
    test = node.test
    if not (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
    ):
        return None
    return test.left.value if subject in (None, test.left.value) else None


def _ends_the_function(body: cst.BaseSuite) -> bool:
    """The block always leaves the function: its last statement is a return or a raise."""
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise))


def _case(node: cst.If) -> cst.MatchCase:
    literal = node.test.comparisons[0].comparator
    return cst.MatchCase(pattern=cst.MatchValue(literal), body=node.body)


class _IfChainsToMatch(cst.CSTTransformer):
    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock):
        body = list(updated_node.body)
        out: list[cst.BaseStatement] = []
        i = 0
        while i < len(body):
            chain = self._chain(body, i)
            if chain is None:
                out.append(body[i])
                i += 1
                continue
            statement, used = chain
            out.append(statement)
            i += used
        return updated_node.with_changes(body=out)

    def _chain(self, body: list[cst.BaseStatement], start: int) -> tuple[cst.Match, int] | None:
        """An `if`/`elif` chain on one name and string literals (an `else` becomes `case _`), or consecutive
        `if`s on one name whose blocks each leave the function: one `match` statement, and how many it replaces."""
        first = body[start]
        if not isinstance(first, cst.If) or (subject := _string_cases(first)) is None:
            return None
        cases, node = [], first
        while isinstance(node, cst.If) and _string_cases(node, subject):
            cases.append(_case(node))
            node = node.orelse.body if isinstance(node.orelse, cst.Else) else node.orelse
            if isinstance(node, cst.If) is False and node is not None:  # an else: block
                cases.append(cst.MatchCase(pattern=cst.MatchAs(), body=node))
                node = None
        if node is not None:  # an elif of another shape
            return None
        used = 1
        if len(cases) == 1 and first.orelse is None:
            while start + used < len(body):
                following = body[start + used]
                if not (isinstance(following, cst.If) and following.orelse is None):
                    break
                if not _string_cases(following, subject):
                    break
                cases.append(_case(following))
                used += 1
            if not all(_ends_the_function(body[start + k].body) for k in range(used)):
                return None
        if len(cases) < 2:
            return None
        match = cst.Match(subject=cst.Name(subject), cases=cases, leading_lines=first.leading_lines)
        return match, used


class IfChainAsMatch(Transformation):
    NAME = "if-chain-as-match"
    FAMILY = "dispatch"
    DESCRIPTION = (
        'An `if kind == "a": ... elif kind == "b": ...` chain, or consecutive `if kind == ...:` blocks that '
        "each return, becomes `match kind:` with a `case` per literal."
    )
    NOTHING_TO_REWRITE = "no if chain on one name and string literals"
    EXAMPLES = (
        Example(
            before=(
                'def pick(kind):\n    if kind == "a":\n        return 1\n    elif kind == "b":\n        return 2\n'
                "    else:\n        return 3\n"
            ),
            after=(
                'def pick(kind):\n    match kind:\n        case "a":\n            return 1\n        case "b":\n'
                "            return 2\n        case _:\n            return 3\n"
            ),
        ),
        Example(
            before=(
                'def pick(kind):\n    if kind == "a":\n        return 1\n    if kind == "b":\n        return 2\n'
                "    raise ValueError(kind)\n"
            ),
            after=(
                'def pick(kind):\n    match kind:\n        case "a":\n            return 1\n        case "b":\n'
                "            return 2\n    raise ValueError(kind)\n"
            ),
        ),
        # the first block may fall through to the second test: not a choice of one
        Example(
            before='def pick(kind):\n    if kind == "a":\n        print(1)\n    if kind == "b":\n        return 2\n',
            after='def pick(kind):\n    if kind == "a":\n        print(1)\n    if kind == "b":\n        return 2\n',
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        return module.visit(_IfChainsToMatch())


class _RegistryToFunction(cst.CSTTransformer):
    def __init__(self, registries: dict[str, str]) -> None:
        self.registries = registries  # registry name -> its selector function's name

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node):
        assign = original_node.body[0]
        if not (isinstance(assign, cst.Assign) and isinstance(assign.targets[0].target, cst.Name)):
            return updated_node
        name = assign.targets[0].target.value
        if name not in self.registries or not isinstance(assign.value, cst.Dict):
            return updated_node
        cases = "".join(
            f"    if key == {e.key.value}:\n        return {e.value.value}\n" for e in assign.value.elements
        )
        function = cst.parse_statement(f"def {self.registries[name]}(key):\n{cases}    raise KeyError(key)\n")
        return function.with_changes(leading_lines=original_node.leading_lines)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        value = original_node.value
        if isinstance(value, cst.Name) and value.value in self.registries:
            key = updated_node.slice[0].slice
            return cst.Call(func=cst.Name(self.registries[value.value]), args=[cst.Arg(key.value)])
        return updated_node


def _registries(text: str) -> list[str]:
    """Module-scope `NAME = {"literal": name, ...}` read only as `NAME[key]` in this file."""
    tree = ast.parse(text)
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if not (isinstance(value, ast.Dict) and value.keys):
            continue
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            continue
        if not all(isinstance(v, ast.Name) for v in value.values):
            continue
        name = node.targets[0].id
        reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and n is not node.targets[0]]
        subscripts = [
            n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and n.value.id == name and isinstance(n.ctx, ast.Load) and not isinstance(n.slice, ast.Slice)
        ]  # fmt: skip
        if reads and len(reads) == len(subscripts):
            found.append(name)
    return found


class RegistryAsFunction(Transformation):
    NAME = "registry-as-function"
    FAMILY = "dispatch"
    DESCRIPTION = (
        'A module-scope dict registry `EFFECTS = {"a": make_a, ...}` read only as `EFFECTS[key]` becomes a '
        "function that returns the entry by `if key == ...: return ...` (and raises KeyError as the dict did)."
    )
    NOTHING_TO_REWRITE = "no dict registry of names read only by subscript in its own file"
    EXAMPLES = (
        Example(
            before='EFFECTS = {"a": make_a, "b": make_b}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n',
            after=(
                'def _select_effects(key):\n    if key == "a":\n        return make_a\n    if key == "b":\n'
                "        return make_b\n    raise KeyError(key)\n\n\n"
                "def run(kind):\n    return _select_effects(kind)()\n"
            ),
        ),
        # a registry another file reads (or one the program iterates, tests with `in`, or fills) stays a dict
        Example(
            path="pkg/effects.py",
            before='EFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n',
            after='EFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n',
            others=(("pkg/main.py", "from pkg.effects import EFFECTS\n\nprint(list(EFFECTS))\n"),),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        registries = self._rewritten(path, module.code, fixture)
        return module.visit(_RegistryToFunction(registries)) if registries else None

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, naming each selector as the plan names a registry: `_select_effects(...)` is
        `EFFECTS[...]`."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            for path, text in fixture.sources.items():
                renamed = self._rewritten(path, text, fixture).items()
                variant.names.update({f"{function}(...)": f"{name}[...]" for name, function in renamed})
        return variant

    def _rewritten(self, path: str, text: str, fixture: Fixture) -> dict[str, str]:
        """The file's registries this transformation rewrites -> their selector functions' names."""
        elsewhere = [other for p, other in fixture.every_python_file.items() if p != path]
        registries = {
            name: f"_select_{name.lower()}"
            for name in _registries(text)
            if not any(name in names_in(other) for other in elsewhere)
        }
        return {} if set(registries.values()) & names_in(text) else registries
