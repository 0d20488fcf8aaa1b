"""The dispatch family: the same choice of code written as a dict registry, an `if` chain or a `match`."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from tests.variants.names import names_in
from tests.variants.placement import after_leading_imports
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


def _prefix_and_suffix(registry: ast.Dict) -> tuple[str, str] | None:
    """(prefix, suffix) every entry's name adds to its key (`"fade": make_fade`: ("make_", "")), or None where the
    entries are named otherwise, a key is not an identifier or is not a word of its entry's name."""
    pairs = [(k.value, v.id) for k, v in zip(registry.keys, registry.values)]
    if not all(k.isidentifier() for k, _ in pairs):
        return None
    key, value = pairs[0]
    for at in (i for i in range(len(value)) if value.startswith(key, i)):
        prefix, suffix = value[:at], value[at + len(key) :]
        at_words = prefix.endswith("_") or suffix.startswith("_")  # `make_fade`, `fade_kernel`: a word of its own
        if at_words and all(v == f"{prefix}{k}{suffix}" for k, v in pairs):
            return prefix, suffix
    return None


def _module_scope_names(tree: ast.Module) -> set[str]:
    """The names a file binds at module scope (definitions, assignments, imports)."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            found |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found


def _under_try(tree: ast.Module, name: str) -> bool:
    """A subscript of `name` sits in a `try` body: the program could observe which exception a missing key raises."""
    return any(
        isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == name
        for node in ast.walk(tree) if isinstance(node, ast.Try)
        for statement in node.body for sub in ast.walk(statement)
    )  # fmt: skip


class _RegistryToGetattr(cst.CSTTransformer):
    def __init__(self, patterns: dict[str, tuple[str, str]], module: str) -> None:
        self.patterns = patterns  # registry name -> (prefix, suffix) of its entries' names
        self.module = module  # the expression that is this file's module

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine, updated_node):
        assign = original_node.body[0]
        target = assign.targets[0].target if isinstance(assign, cst.Assign) else None
        if isinstance(target, cst.Name) and target.value in self.patterns and isinstance(assign.value, cst.Dict):
            return cst.RemoveFromParent()
        return updated_node

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        value = original_node.value
        if not (isinstance(value, cst.Name) and value.value in self.patterns):
            return updated_node
        prefix, suffix = self.patterns[value.value]
        key = cst.Module([]).code_for_node(updated_node.slice[0].slice.value)
        return cst.parse_expression(f'getattr({self.module}, f"{prefix}{{{key}}}{suffix}")')


class RegistryAsModuleGetattr(Transformation):
    """A registry whose every entry is named after its key (`"fade": make_fade`) is the module's own names looked
    up by `getattr`. A key outside the registry raised KeyError and now raises AttributeError: both are uncaught
    where the precondition holds (no lookup sits in a `try`), and a run that looked one up would fail either way."""

    NAME = "registry-as-module-getattr"
    FAMILY = "dispatch"
    DESCRIPTION = (
        'A module-scope registry `EFFECTS = {"fade": make_fade, ...}` whose entries are named after their keys '
        'becomes `getattr(sys.modules[__name__], f"make_{key}")` over the module\'s own names.'
    )
    NOTHING_TO_REWRITE = (
        "no registry read only by subscript in its own file whose entries are the file's names after their keys, "
        "with no other name of that pattern and no lookup in a try"
    )
    EXAMPLES = (
        Example(
            before=(
                "def make_a():\n    pass\n\n\ndef make_b():\n    pass\n\n\n"
                'EFFECTS = {"a": make_a, "b": make_b}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n'
            ),
            after=(
                "import sys\ndef make_a():\n    pass\n\n\ndef make_b():\n    pass\n\n\n"
                'def run(kind):\n    return getattr(sys.modules[__name__], f"make_{kind}")()\n'
            ),
        ),
        # `make_c` is of the pattern and not an entry: getattr would find it where the dict raised KeyError
        Example(
            before=(
                "def make_a():\n    pass\n\n\ndef make_c():\n    pass\n\n\n"
                'EFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n'
            ),
            after=(
                "def make_a():\n    pass\n\n\ndef make_c():\n    pass\n\n\n"
                'EFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    return EFFECTS[kind]()\n'
            ),
        ),
        # a lookup in a try could catch the KeyError
        Example(
            before=(
                'def make_a():\n    pass\n\n\nEFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    try:\n'
                "        return EFFECTS[kind]()\n    except KeyError:\n        return None\n"
            ),
            after=(
                'def make_a():\n    pass\n\n\nEFFECTS = {"a": make_a}\n\n\ndef run(kind):\n    try:\n'
                "        return EFFECTS[kind]()\n    except KeyError:\n        return None\n"
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        tree = ast.parse(module.code)
        patterns = self._patterns(path, tree, fixture)
        if not patterns:
            return None
        sys_bound = "sys" in names_in(module.code)
        imports_sys = any(
            isinstance(n, ast.Import) and any(a.name == "sys" and a.asname is None for a in n.names) for n in tree.body
        )
        if sys_bound and not imports_sys:
            return None
        new = module.visit(_RegistryToGetattr(patterns, "sys.modules[__name__]"))
        if imports_sys:
            return new
        return after_leading_imports(new, cst.parse_statement("import sys\n"))

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, naming each lookup as the plan names a registry: `getattr(sys.modules[__name__],
        f"make_{...}")` is `EFFECTS[...]`."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            for path, text in fixture.sources.items():
                for name, (prefix, suffix) in self._patterns(path, ast.parse(text), fixture).items():
                    variant.names[f'getattr(sys.modules[__name__], f"{prefix}{{...}}{suffix}")'] = f"{name}[...]"
        return variant

    def _patterns(self, path: str, tree: ast.Module, fixture: Fixture) -> dict[str, tuple[str, str]]:
        """The file's registries this transformation rewrites -> the (prefix, suffix) of their entries."""
        text = fixture.sources[path]
        elsewhere = [other for p, other in fixture.every_python_file.items() if p != path]
        scope_names = _module_scope_names(tree)
        found: dict[str, tuple[str, str]] = {}
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            if name not in _registries(text) or any(name in names_in(other) for other in elsewhere):
                continue
            pattern = _prefix_and_suffix(node.value)
            if pattern is None or _under_try(tree, name):
                continue
            entries = {v.id for v in node.value.values}
            of_pattern = {n for n in scope_names if n.startswith(pattern[0]) and n.endswith(pattern[1])}
            if entries <= scope_names and of_pattern == entries:
                found[name] = pattern
        return found


WARP_CODE_DECORATORS = {"kernel", "func", "func_grad", "func_replay", "func_native", "struct", "overload"}


def _decorator_name(decorator: ast.expr) -> str | None:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)


def _warp_code(tree: ast.Module) -> list[ast.AST]:
    """Functions Warp compiles (decorated, or passed to `wp.kernel(fn)`): a literal there is kernel code, where a
    module global reads differently."""
    passed = {
        call.args[0].id for call in ast.walk(tree)
        if isinstance(call, ast.Call) and _decorator_name(call) in WARP_CODE_DECORATORS
        and call.args and isinstance(call.args[0], ast.Name)
    }  # fmt: skip
    return [
        node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (node.name in passed or any(_decorator_name(d) in WARP_CODE_DECORATORS for d in node.decorator_list))
    ]  # fmt: skip


def _project_callables(tree: ast.Module, packages: set[str]) -> tuple[set[str], set[str]]:
    """(names, modules): the callables a file defines at module scope or imports from the project by name, and the
    names it binds to the project's modules (`from pkg import stages`: `stages.make(...)` is the project's)."""
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in packages):
            names |= {a.asname or a.name for a in node.names}
            modules |= {a.asname or a.name for a in node.names}  # a sub-module or a callable: either is the project's
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.asname and a.name.split(".")[0] in packages}
    return names, modules


class _LiteralsToConstants(cst.CSTTransformer):
    def __init__(self, calls: dict[tuple[int, int], list[str]]) -> None:
        self.calls = calls  # (line, column) of a call -> the constant of each literal argument ("" : left as is)
        self.constants: list[tuple[str, str]] = []  # (name, literal) in the order they are read
        self._positions: dict[cst.Call, tuple[int, int]] = {}

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        start = self.get_metadata(cst.metadata.PositionProvider, original_node).start
        names = self.calls.get((start.line, start.column))
        if names is None:
            return updated_node
        args = []
        for arg, name in zip(updated_node.args, names):
            if name:
                self.constants.append((name, cst.Module([]).code_for_node(arg.value)))
                arg = arg.with_changes(value=cst.Name(name))
            args.append(arg)
        return updated_node.with_changes(args=args)


class ArgumentAsModuleConstant(Transformation):
    """The choice a call passes as a literal (`finish(img, "vignette")`, `make_box(3)`) is read from a module
    constant of the calling file (`_FINISH_EFFECT = "vignette"` ... `finish(img, _FINISH_EFFECT)`): the same value
    reaches the same parameter. Only calls of the project's own functions and classes (a library's call is not the
    program's choice), never inside code Warp compiles, and never in a file that reads its own globals."""

    NAME = "argument-as-module-constant"
    FAMILY = "dispatch"
    DESCRIPTION = (
        "A literal argument of a call of the project's own function or class becomes a module constant of the "
        'calling file: `finish(img, "vignette")` reads `_FINISH_ARG2 = "vignette"`.'
    )
    NOTHING_TO_REWRITE = "no call of the project's own functions passes a literal, outside Warp code"
    EXAMPLES = (
        Example(
            before=(
                "import warp as wp\n\nfrom pkg import effects\n\n\n"
                'def main(img):\n    effects.finish(img, "vignette", size=3)\n    wp.synchronize()\n'
            ),
            after=(
                'import warp as wp\n\nfrom pkg import effects\n_FINISH_ARG2 = "vignette"\n_FINISH_SIZE = 3\n\n\n'
                "def main(img):\n    effects.finish(img, _FINISH_ARG2, size=_FINISH_SIZE)\n    wp.synchronize()\n"
            ),
            path="pkg/main.py",
        ),
        # a library's call (np.zeros(3)) is not the project's choice; a literal in kernel code stays a literal
        Example(
            before=(
                "import numpy as np\nimport warp as wp\n\n\n@wp.func\ndef scale(x: float, s: float):\n"
                "    return x * s\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                "    a[0] = scale(a[0], 2.0)\n\n\nx = np.zeros(3)\n"
            ),
            after=(
                "import numpy as np\nimport warp as wp\n\n\n@wp.func\ndef scale(x: float, s: float):\n"
                "    return x * s\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
                "    a[0] = scale(a[0], 2.0)\n\n\nx = np.zeros(3)\n"
            ),
            path="pkg/main.py",
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        tree = ast.parse(module.code)
        taken = names_in(module.code)
        if {"globals", "vars", "dir"} & taken:
            return None
        calls = self._calls(tree, fixture.packages, taken)
        if not calls:
            return None
        transformer = _LiteralsToConstants(calls)
        new = cst.metadata.MetadataWrapper(module).visit(transformer)
        constants = cst.parse_module("".join(f"{name} = {value}\n" for name, value in transformer.constants))
        for statement in reversed(constants.body):
            new = after_leading_imports(new, statement)
        return new

    def _calls(self, tree: ast.Module, packages: set[str], taken: set[str]) -> dict[tuple[int, int], list[str]]:
        """(line, column) of each call to rewrite -> per argument, its constant's name or "" (left as is)."""
        names, modules = _project_callables(tree, packages)
        in_warp_code = {id(n) for f in _warp_code(tree) for n in ast.walk(f)}
        found: dict[tuple[int, int], list[str]] = {}
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call) or id(call) in in_warp_code:
                continue
            func = call.func
            if isinstance(func, ast.Name) and func.id in names:
                callee = func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
                callee = func.attr
            else:
                continue
            labels = [f"ARG{i + 1}" for i in range(len(call.args))] + [k.arg or "" for k in call.keywords]
            values = [*call.args, *(k.value for k in call.keywords)]
            constants = []
            for label, value in zip(labels, values):
                literal = isinstance(value, ast.Constant) and type(value.value) in (str, int, float)
                name = f"_{callee.upper()}_{label.upper()}".replace("__", "_") if literal and label else ""
                while name and name in taken:
                    name += "_"
                taken.add(name)
                constants.append(name)
            if any(constants):
                found[(call.lineno, call.col_offset)] = constants
        return found


def _string_compared_attributes(method: ast.FunctionDef) -> set[str]:
    """`X` of each `self.X` an `if` test of the method compares with a string (`if self.kind == "edge":`)."""
    found: set[str] = set()
    for node in ast.walk(method):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
            found |= {
                s.attr for s in sides
                if isinstance(s, ast.Attribute) and isinstance(s.value, ast.Name) and s.value.id == "self"
            }  # fmt: skip
    return found


def _set_once_in_init(attribute: str, cls: ast.ClassDef, fixture: Fixture) -> bool:
    """The project stores `.attribute` once, as `self.attribute = ...` in the class's `__init__`, and never by
    `setattr`, and the class defines no member of that name (a property would run code at each read)."""
    stores = [
        node for text in fixture.every_python_file.values() for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Store | ast.Del)
    ]  # fmt: skip
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    in_init = len(stores) == 1 and init is not None and any(
        isinstance(n, ast.Attribute) and n.attr == attribute and isinstance(n.ctx, ast.Store) for n in ast.walk(init)
    )
    dynamic = any("setattr(" in text or "__dict__" in text for text in fixture.every_python_file.values())
    members = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return in_init and not dynamic and attribute not in members


class _AttributesToLocals(cst.CSTTransformer):
    def __init__(self, reads: dict[tuple[str, str], set[str]]) -> None:
        self.reads = reads  # (class, method) -> the attributes the method reads once into a local
        self.classes: list[str] = []
        self.current: set[str] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.classes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.classes and not self.current:
            self.current = self.reads.get((self.classes[-1], node.name.value), set())

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        value = original_node.value
        if isinstance(value, cst.Name) and value.value == "self" and original_node.attr.value in self.current:
            return cst.Name(original_node.attr.value)
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not (self.classes and self.current) or (self.classes[-1], original_node.name.value) not in self.reads:
            return updated_node
        body = list(updated_node.body.body)
        at = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) else 0
        reads = [cst.parse_statement(f"{name} = self.{name}\n") for name in sorted(self.current)]
        self.current = set()
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*body[:at], *reads, *body[at:]]))


class AttributeReadIntoLocal(Transformation):
    """The kind an object was given (`Filter("edge")` stores `self.kind`) is read once into a local at the start
    of the method that branches on it (`kind = self.kind` ... `if kind == "edge":`), as many projects write it.
    The value is the same where the attribute is set once, in `__init__`, and nothing else can change it."""

    NAME = "attribute-read-into-local"
    FAMILY = "dispatch"
    DESCRIPTION = (
        'A method that compares `self.kind` with strings reads it once into a local: `kind = self.kind` ... '
        '`if kind == "edge":`.'
    )
    NOTHING_TO_REWRITE = (
        "no method compares with a string an attribute set once in __init__ (and by no setattr) whose name is free"
    )
    EXAMPLES = (
        Example(
            before=(
                "class Filter:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def kernel(self):\n"
                '        """The kernel of its kind."""\n        if self.kind == "edge":\n            return 1\n'
                "        raise ValueError(self.kind)\n"
            ),
            after=(
                "class Filter:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def kernel(self):\n"
                '        """The kernel of its kind."""\n        kind = self.kind\n        if kind == "edge":\n'
                "            return 1\n        raise ValueError(kind)\n"
            ),
        ),
        # an attribute set again later could change between the start of the method and its test
        Example(
            before=(
                "class Filter:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def kernel(self):\n"
                '        self.kind = "edge"\n        if self.kind == "edge":\n            return 1\n'
            ),
            after=(
                "class Filter:\n    def __init__(self, kind):\n        self.kind = kind\n\n    def kernel(self):\n"
                '        self.kind = "edge"\n        if self.kind == "edge":\n            return 1\n'
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        tree = ast.parse(module.code)
        reads: dict[tuple[str, str], set[str]] = {}
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for method in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"):
                taken = names_in(ast.unparse(method))
                attributes = {
                    a for a in _string_compared_attributes(method)
                    if a not in taken and _set_once_in_init(a, cls, fixture)
                }  # fmt: skip
                if attributes:
                    reads[(cls.name, method.name)] = attributes
        return module.visit(_AttributesToLocals(reads)) if reads else None


def _class_name(function: str) -> str:
    return "_" + "".join(part.capitalize() for part in function.split("_") if part)


_STRING_TESTS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _is_string_choice(node: ast.expr) -> bool:
    """A string literal, or a tuple, list or set of them (`kind in ("a", "b")`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    elements = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else []
    return bool(elements) and all(map(_is_string_choice, elements))


def _kind_parameter(function: ast.FunctionDef) -> str | None:
    """The first parameter the function compares with string literals (`if kind == "edge":`, `match kind:`)."""
    compared: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name):
            pairs = zip(node.ops, node.comparators)
            if all(isinstance(op, _STRING_TESTS) and _is_string_choice(c) for op, c in pairs):
                compared.add(node.left.id)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Name):
            if isinstance(node.ops[0], ast.Eq | ast.NotEq) and _is_string_choice(node.left):
                compared.add(node.comparators[0].id)
        elif isinstance(node, ast.Match) and isinstance(node.subject, ast.Name):
            compared.add(node.subject.id)
    return next((a.arg for a in function.args.args if a.arg in compared), None)


def _rebinds(function: ast.FunctionDef, name: str) -> bool:
    """The body binds `name` again (an assignment, a loop, an import, `except ... as`, `global`)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store | ast.Del):
            return True
        if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return True
    return False


def _identifiers(node: ast.AST) -> set[str]:
    """Every name and attribute name under `node`."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _mangled(names: set[str]) -> bool:
    """A name a class body would mangle (`__x`, not `__x__`)."""
    return any(n.startswith("__") and not n.endswith("__") for n in names)


# What a wrapper would not carry over from the function it stands for.
_FUNCTION_INTERNALS = {"__doc__", "__code__", "__defaults__", "__kwdefaults__", "__wrapped__", "__annotations__"}


@dataclass(frozen=True)
class _KindFunction:
    """A module-scope function that chooses by a string parameter, and the class it becomes."""

    name: str
    kind: str  # the parameter compared with strings
    position: int  # its index among the parameters
    parameters: tuple[str, ...]  # every parameter's name, in order
    holder: str  # the class
    wrapper: bool  # the module keeps the name as a function calling the class (read otherwise, or elsewhere)
    calls: frozenset[tuple[int, int]]  # (line, column) of the calls of its file written through the class


def _call_through_class(call: ast.Call, found: _KindFunction) -> bool:
    """The call can name the class where it named the function: its arguments are plain, the kind is found, and
    reading the kind first does not change what the other arguments see (a literal, or nothing with effects
    before it)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    keywords = [k.arg for k in call.keywords]
    if len(call.args) > found.position:
        kind, before = call.args[found.position], call.args[: found.position]
    elif found.kind in keywords:
        at = keywords.index(found.kind)
        kind, before = call.keywords[at].value, [*call.args, *(k.value for k in call.keywords[:at])]
    else:
        return False
    literal = isinstance(kind, ast.Constant) and isinstance(kind.value, str)
    return literal or all(isinstance(b, ast.Constant | ast.Name) for b in before)


def _kind_functions(path: str, text: str, fixture: Fixture) -> list[_KindFunction]:
    """The file's functions this transformation writes as classes."""
    tree = ast.parse(text)
    taken = names_in(text)
    others = [t for p, t in fixture.every_python_file.items() if p != path]
    elsewhere = set().union(*(_identifiers(ast.parse(t)) for t in others)) if others else set()
    internals = any(_FUNCTION_INTERNALS & _identifiers(ast.parse(t)) for t in fixture.every_python_file.values())
    found: list[_KindFunction] = []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef) or function.decorator_list:
            continue
        args = function.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
            continue
        if not all(isinstance(d, ast.Constant) for d in args.defaults):
            continue  # a default evaluated twice (in the class and in a wrapper) could differ
        inside = [n for statement in function.body for n in ast.walk(statement)]
        if any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda) for n in inside):
            continue  # their qualified names (a kernel's key) would change
        names = _identifiers(function)
        if {"self", "super", "__class__"} & names or _mangled(names):
            continue
        kind = _kind_parameter(function)
        holder = _class_name(function.name)
        if kind is None or _rebinds(function, kind) or holder in taken:
            continue
        parameters = tuple(a.arg for a in args.args)
        candidate = _KindFunction(function.name, kind, parameters.index(kind), parameters, holder, False, frozenset())
        calls = [
            n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == function.name
        ]  # fmt: skip
        through = frozenset((c.lineno, c.col_offset) for c in calls if _call_through_class(c, candidate))
        reads = sum(isinstance(n, ast.Name) and n.id == function.name for n in ast.walk(tree))
        wrapper = function.name in elsewhere or reads != len(through)
        if wrapper and internals:
            continue
        found.append(_KindFunction(function.name, kind, candidate.position, parameters, holder, wrapper, through))
    return found


class _KindToConstructor(cst.CSTTransformer):
    """Each chosen function written as its class (and a wrapper where it keeps its name); its calls that can
    name the class do."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, functions: list[_KindFunction], kind_reads: set[tuple[int, int]]) -> None:
        self.functions = {f.name: f for f in functions}
        self.calls = {place: f for f in functions for place in f.calls}
        self.kind_reads = kind_reads  # (line, column) of each read of a kind parameter inside its function

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        start = self.get_metadata(cst.metadata.PositionProvider, original_node).start
        if (start.line, start.column) in self.kind_reads:
            return cst.Attribute(cst.Name("self"), cst.Name(original_node.value))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        start = self.get_metadata(cst.metadata.PositionProvider, original_node).start
        found = self.calls.get((start.line, start.column))
        if found is None:
            return updated_node
        positional = [a for a in updated_node.args if a.keyword is None]
        if len(positional) > found.position:
            kind = positional[found.position]
            rest = [a for a in updated_node.args if a is not kind]
        else:
            kind = next(a for a in updated_node.args if a.keyword and a.keyword.value == found.kind)
            rest = [a for a in updated_node.args if a is not kind]
        kind = kind.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)
        if rest:
            rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        holder = cst.Call(func=cst.Name(found.holder), args=[kind])
        return updated_node.with_changes(func=cst.Attribute(holder, cst.Name("run")), args=rest)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef):
        found = self.functions.get(original_node.name.value)
        if found is None:
            return updated_node
        params = list(updated_node.params.params)
        kind = params.pop(found.position)
        kind_text = cst.Module([]).code_for_node(kind.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
        if params:
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        init = cst.parse_statement(f"def __init__(self, {kind_text}):\n    self.{found.kind} = {found.kind}\n")
        run = updated_node.with_changes(
            name=cst.Name("run"),
            params=updated_node.params.with_changes(params=[cst.Param(cst.Name("self")), *params]),
            leading_lines=(cst.EmptyLine(indent=False),),
        )
        holder = cst.ClassDef(
            cst.Name(found.holder), cst.IndentedBlock(body=[init, run]), leading_lines=original_node.leading_lines
        )
        if not found.wrapper:
            return holder
        signature = cst.Module([]).code_for_node(original_node.params)
        arguments = ", ".join(p for p in found.parameters if p != found.kind)
        wrapper = cst.parse_statement(
            f"def {found.name}({signature}):\n    return {found.holder}({found.kind}).run({arguments})\n"
        ).with_changes(leading_lines=(cst.EmptyLine(), cst.EmptyLine()))
        return cst.FlattenSentinel([holder, wrapper])


def _kind_reads(tree: ast.Module, text: str, functions: list[_KindFunction]) -> set[tuple[int, int]]:
    """(line, column in characters) of every read of a chosen function's kind parameter in its body."""
    lines = text.splitlines()
    chosen = {f.name: f.kind for f in functions}
    found = set()
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and function.name in chosen:
            for statement in function.body:
                for n in ast.walk(statement):
                    if isinstance(n, ast.Name) and n.id == chosen[function.name]:
                        column = len(lines[n.lineno - 1].encode()[: n.col_offset].decode())
                        found.add((n.lineno, column))
    return found


class KindThroughConstructor(Transformation):
    """A function that builds or launches what its string parameter names (`finish(img, "vignette")`) is a small
    class given the kind by its constructor, stored on `self` and read where the function read the parameter:
    `_Finish("vignette").run(img)`. The body, its globals and what it returns are the same; only the kind's
    reading moves from a local to an attribute set once. Where the function is read otherwise (another file
    imports it, a test calls it, a call passes it `*args`), the module keeps the name as a wrapper of the same
    signature, `def finish(img, effect): return _Finish(effect).run(img)`, so every other reader is left as it is
    (rewriting another file's imports would reach into the project's tests). A function that defines a function,
    a kernel, a class or a lambda inside stays: their qualified names, so a kernel's key, would change."""

    NAME = "kind-through-constructor"
    FAMILY = "dispatch"
    DESCRIPTION = (
        "A module-scope function that compares a string parameter with literals becomes a class whose constructor "
        'stores the kind on `self`: `finish(img, "edge")` reads `_Finish("edge").run(img)`.'
    )
    NOTHING_TO_REWRITE = (
        "no module-scope function compares a parameter it never rebinds with strings without defining a function, "
        "kernel or class inside"
    )
    EXAMPLES = (
        Example(
            before=(
                'import warp as wp\n\n\ndef finish(img, kind):\n    if kind == "edge":\n'
                '        wp.launch(edge, dim=1, inputs=[img])\n    elif kind == "blur":\n'
                "        wp.launch(blur, dim=1, inputs=[img])\n    else:\n"
                '        raise ValueError(kind)\n\n\ndef main(img):\n    finish(img, "edge")\n'
            ),
            after=(
                "import warp as wp\n\n\nclass _Finish:\n    def __init__(self, kind):\n        self.kind = kind\n\n"
                '    def run(self, img):\n        if self.kind == "edge":\n'
                '            wp.launch(edge, dim=1, inputs=[img])\n        elif self.kind == "blur":\n'
                "            wp.launch(blur, dim=1, inputs=[img])\n        else:\n"
                '            raise ValueError(self.kind)\n\n\ndef main(img):\n    _Finish("edge").run(img)\n'
            ),
        ),
        # imported by another file: the module keeps the name as a wrapper of the same signature
        Example(
            path="pkg/walls.py",
            before=(
                'def wall_kernel(kind: str = "closed"):\n    if kind == "closed":\n        return reflect\n'
                "    return open_ends\n"
            ),
            after=(
                'class _WallKernel:\n    def __init__(self, kind: str = "closed"):\n        self.kind = kind\n\n'
                '    def run(self):\n        if self.kind == "closed":\n            return reflect\n'
                '        return open_ends\n\n\ndef wall_kernel(kind: str = "closed"):\n'
                "    return _WallKernel(kind).run()\n"
            ),
            others=(("pkg/sim.py", 'from pkg.walls import wall_kernel\n\nK = wall_kernel("open")\n'),),
        ),
        # a factory: the kernel it defines would get another key
        Example(
            before=(
                'import warp as wp\n\n\ndef make(kind):\n    if kind == "edge":\n\n        @wp.kernel\n'
                "        def edge():\n            pass\n\n        return edge\n"
            ),
            after=(
                'import warp as wp\n\n\ndef make(kind):\n    if kind == "edge":\n\n        @wp.kernel\n'
                "        def edge():\n            pass\n\n        return edge\n"
            ),
        ),
    )

    def rewrite(self, path: str, module: cst.Module, fixture: Fixture) -> cst.Module | None:
        text = module.code
        functions = _kind_functions(path, text, fixture)
        if not functions:
            return None
        reads = _kind_reads(ast.parse(text), text, functions)
        return cst.metadata.MetadataWrapper(module).visit(_KindToConstructor(functions, reads))

    def apply(self, fixture: Fixture) -> Variant | Skip:
        """The variant, whose plan reads a class's `run` (`_Finish.run`) as the function it was (`finish`)."""
        variant = super().apply(fixture)
        if isinstance(variant, Variant):
            for path, text in fixture.sources.items():
                variant.names.update({f"{f.holder}.run": f.name for f in _kind_functions(path, text, fixture)})
        return variant
