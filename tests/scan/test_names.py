"""A dotted name means what the file's imports make it mean, exactly as libcst's QualifiedNameProvider reads them.

The scan reads import bindings itself (libcst's provider cost seconds on a large tree); libcst stays the oracle:
every dotted name of the fixtures and of Warp's examples whose first part an import binds resolves the same.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
import warp

from warp_fix.scan.names import ImportBindings, NameRequest, NameResolver, dotted_name, resolve_files
from warp_fix.scan.scanner import PreparedFile, _imported_names

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
WARP_PACKAGE = Path(warp.__file__).resolve().parent


def bindings(source: str) -> ImportBindings:
    tree = ast.parse(textwrap.dedent(source))
    return ImportBindings([n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)])


@pytest.mark.parametrize(
    ("source", "dotted", "expected"),
    [
        ("import warp as wp", "wp.config.mode", {"warp.config.mode"}),
        ("import warp", "warp.launch", {"warp.launch"}),
        ("import warp.config", "warp.config.mode", {"warp.config.mode"}),
        ("import warp.config as c", "c.mode", {"warp.config.mode"}),
        ("from warp import kernel as k", "k", {"warp.kernel"}),
        ("from warp import kernel, launch", "launch", {"warp.launch"}),
        ("from . import util", "util.f", {".util.f"}),
        ("from ..pkg import util", "util", {"..pkg.util"}),
        ("import numpy as np", "wp.launch", set()),
        ("from x import a, ab", "ab.c", {"x.ab.c"}),
        # conditional imports: every statement that binds the name counts
        (
            """
            try:
                import warp as wp
            except ImportError:
                import fallback as wp
            """,
            "wp.launch",
            {"warp.launch", "fallback.launch"},
        ),
        # the longest bound leading part decides: `import os.path` binds "os.path" and "os"
        ("import os\nimport os.path as p", "p.join", {"os.path.join"}),
    ],
)
def test_a_dotted_name_reads_through_the_import_that_binds_it(source: str, dotted: str, expected: set[str]) -> None:
    assert bindings(source).qualified_names(dotted) == expected


def test_star_and_future_imports_bind_nothing() -> None:
    [resolver] = resolve_files([_request("from warp import *\nfrom __future__ import annotations\nlaunch(k)\n")])
    assert resolver.qualified_names("launch") == frozenset()


def test_a_warp_symbol_drops_the_internal_segments() -> None:
    [resolver] = resolve_files([NameRequest(ast.parse("import warp._src.context as ctx").body, {"ctx.launch"})])
    assert resolver.warp_symbol(ast.parse("ctx.launch", mode="eval").body) == "launch"


@pytest.mark.parametrize("root", [FIXTURES, WARP_PACKAGE / "examples"], ids=["fixtures", "warp-examples"])
def test_every_bound_name_resolves_as_libcst_resolves_it(root: Path) -> None:
    requests = [_every_bound_name(path) for path in sorted(root.rglob("*.py"))]
    requests = [request for request in requests if request.dotted_names]
    compared = disagreements = 0
    for request, ours, libcst in zip(requests, resolve_files(requests), _libcst_oracle(requests), strict=True):
        for dotted in request.dotted_names:
            compared += 1
            disagreements += ours.qualified_names(dotted) != libcst.qualified_names(dotted)
    assert compared > 1000  # the trees hold real code, not a handful of names
    assert disagreements == 0


def _request(source: str) -> NameRequest:
    tree = ast.parse(source)
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    names = {d for n in ast.walk(tree) if (d := dotted_name(n))}
    return NameRequest(imports, names)


def _every_bound_name(path: Path) -> NameRequest:
    """Every dotted name of the file whose first part an import binds (the scan asks about a subset of these)."""
    try:
        prepared = PreparedFile.parse(path.read_text(encoding="utf-8"), None)  # type: ignore[arg-type]
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return NameRequest([], set())
    imports = prepared.name_request().imports
    bound = _imported_names(imports)
    names = {d for n in prepared.nodes if (d := dotted_name(n)) and d.split(".", 1)[0] in bound}
    return NameRequest(imports, names)


def _libcst_oracle(requests: list[NameRequest]) -> list[NameResolver]:
    """libcst's QualifiedNameProvider over a synthetic module: per file, a function holding its bindable imports and
    one expression statement per wanted name (the way the scan resolved names before it read imports itself)."""
    import libcst as cst
    from libcst._metadata_dependent import LazyValue
    from libcst.metadata import MetadataWrapper, QualifiedNameProvider

    resolvers = []
    for request in requests:
        imports = [ast.unparse(i) for i in request.imports if _bindable(i)]
        wanted = sorted(request.dotted_names) if imports else []
        body = "".join(f"    {line}\n" for line in [*imports, *wanted] or ["pass"])
        module = cst.parse_module(f"def _file():\n{body}")
        provided = MetadataWrapper(module, unsafe_skip_copy=True).resolve(QualifiedNameProvider)
        statements = module.body[0].body.body[len(imports) :]  # type: ignore[attr-defined]
        resolved = {}
        for dotted, statement in zip(wanted, statements, strict=True):
            qualified = provided.get(statement.body[0].value, ())
            qualified = qualified() if isinstance(qualified, LazyValue) else qualified
            resolved[dotted] = frozenset(q.name for q in qualified)
        resolvers.append(NameResolver(resolved))
    return resolvers


def _bindable(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module != "__future__" and not any(a.name == "*" for a in node.names)
    return True
