"""A tape's call is followed through what its callee holds, not through the name it is written with: the same
program written with an alias, a loop, a partial or a stored callback gets the same verdict, or says which call it
could not follow. It never loses the call (`warp_fix/scan/targets.py`)."""

from __future__ import annotations

import ast

import pytest

from warp_fix.scan.differentiation import differentiated_kernels
from warp_fix.scan.names import NameResolver
from warp_fix.scan.parsed import FileInfo, ParsedFile, walk_with_parents
from warp_fix.scan.receivers import Receivers
from warp_fix.scan.targets import CallTargets

MODEL = """
    import warp as wp

    @wp.kernel
    def deflect(x: wp.array(dtype=float)):
        x[wp.tid()] += 1.0

    def deflect_all(x):
        wp.launch(deflect, dim=x.shape[0], inputs=[x])

    class Beam:
        def predict(self, x):
            wp.launch(deflect, dim=x.shape[0], inputs=[x])
"""

# (head of the script, body of `fit` up to and including its `with` block): each runs `deflect` under the tape
REACHED = {
    "a method called directly": ("", "with tape:\n    beam.predict(x)"),
    "a local alias of a method": ("", "go = beam.predict\nwith tape:\n    go(x)"),
    "an aliased import": ("from beams.model import deflect_all as go\n", "with tape:\n    go(x)"),
    "an aliased import in the function": ("", "from beams.model import deflect_all as go\nwith tape:\n    go(x)"),
    "an alias of an imported function": ("from beams.model import deflect_all\n",
                                          "go = deflect_all\nwith tape:\n    go(x)"),
    "an annotated alias": ("", "go: object = beam.predict\nwith tape:\n    go(x)"),
    "an alias chosen by a condition": ("", "go = beam.predict if x else deflect_all\nwith tape:\n    go(x)"),
    "a loop over bound methods": ("", "with tape:\n    for go in (beam.predict,):\n        go(x)"),
    "a partial": ("import functools\n", "go = functools.partial(beam.predict)\nwith tape:\n    go(x)"),
    "a lambda": ("", "go = lambda y: beam.predict(y)\nwith tape:\n    go(x)"),
    "a loop over functions": ("", "with tape:\n    for go in (deflect_all, beam.predict):\n        go(x)"),
    "getattr with the name written": ("", "with tape:\n    getattr(beam, \"predict\")(x)"),
    "a closure calling its factory's callback": (
        "def advance(x):\n    deflect_all(x)\n\n\ndef apply(step, x):\n    def run():\n        step(x)\n    run()\n",
        "with tape:\n    apply(advance, x)"),
    "an instance of a class of the script": ("class Runner:\n    def __call__(self, x):\n        deflect_all(x)\n",
                                             "run = Runner()\nwith tape:\n    run(x)"),
}

# each cannot be followed from what the code says: the tape names that call
UNFOLLOWED = {
    "what a factory returns": ("def make():\n    return deflect_all\n", "go = make()\nwith tape:\n    go(x)",
                               "go(...)"),
    "an instance of an imported class": ("from beams.model import Beam as Other\n",
                                         "other = Other()\nwith tape:\n    other(x)", "other(...)"),
    "a name bound two ways, one unknown": ("", "go = beam.predict\nif x:\n    go = x.pop()\nwith tape:\n    go(x)",
                                           "go(...)"),
    "a with target": ("import contextlib\n", "with contextlib.nullcontext(beam.predict) as go, tape:\n    go(x)",
                      "go(...)"),
    "an alias of a closure's parameter": ("", "def inner(fn):\n    go = fn\n    with tape:\n        go(x)\n"
                                              "inner(beam.predict)", "go(...)"),
}


def _fit(head: str, body: str) -> str:
    indented = "\n".join(f"    {line}" if line else "" for line in body.splitlines())
    return (f"import warp as wp\nimport beams.render\nfrom beams.model import Beam, deflect, deflect_all\n{head}\n\n"
            f"def fit(x):\n    beam = Beam()\n    tape = wp.Tape()\n{indented}\n")


@pytest.mark.parametrize("shape", REACHED)
def test_a_call_through_what_a_name_holds_reaches_the_kernels(scan, shape):
    head, body = REACHED[shape]
    found = differentiated_kernels(scan({"beams/__init__.py": "", "beams/model.py": MODEL,
                                         "beams/render.py": "import warp as wp\n", "scripts/fit.py": _fit(head, body)}))
    assert set(found.kernels) == {"deflect"}
    assert found.unresolved_tapes == []


@pytest.mark.parametrize("shape", UNFOLLOWED)
def test_a_call_the_code_does_not_say_is_named_never_lost(scan, shape):
    head, body, text = UNFOLLOWED[shape]
    found = differentiated_kernels(scan({"beams/__init__.py": "", "beams/model.py": MODEL,
                                         "beams/render.py": "import warp as wp\n", "scripts/fit.py": _fit(head, body)}))
    assert set(found.kernels) <= {"deflect"}  # reached where one of its bindings says so (`beam.predict`)
    assert text in {call.text for tape in found.unresolved_tapes for call in tape.calls}
    # the unfollowed call may run anything the script imports: the model may be differentiated
    assert all(tape.may_reach(["beams/model.py"]) for tape in found.unresolved_tapes)


def test_a_builtin_or_a_module_function_is_followed_by_its_name(scan):
    """`len(...)` and `print(...)` run no project code; a module function is every function of its name."""
    found = differentiated_kernels(scan({"beams/__init__.py": "", "beams/model.py": MODEL,
                                         "scripts/fit.py": _fit("", "with tape:\n    print(len(x))\n    "
                                                                    "deflect_all(x)")}))
    assert set(found.kernels) == {"deflect"} and found.unresolved_tapes == []


def test_a_closure_calling_warps_launch_handed_to_its_factory_launches_a_kernel_it_cannot_name(scan):
    """`launcher` is `wp.launch` at every call of `apply`: the closure's call launches a kernel, one the program
    handles as a value (`deflect`, passed on), so the tape may reach only the file defining it."""
    script = _fit("def apply(launcher, kernel, x):\n    def run():\n        launcher(kernel, dim=4, inputs=[x])\n"
                  "    run()\n", "with tape:\n    apply(wp.launch, deflect, x)")
    found = differentiated_kernels(scan({"beams/__init__.py": "", "beams/model.py": MODEL,
                                         "beams/render.py": "import warp as wp\n", "scripts/fit.py": script}))
    (tape,) = found.unresolved_tapes
    assert [(call.text, call.launch) for call in tape.calls] == [("launcher(...)", True)]
    assert tape.may_reach(["beams/model.py"]) and not tape.may_reach(["beams/render.py"])


def _parsed(text: str) -> ParsedFile:
    tree = ast.parse(text)
    return ParsedFile(FileInfo("m.py", "m", in_repo=True), text, tree, NameResolver(), *walk_with_parents(tree))


def test_a_file_makes_each_reading_once_and_shares_it_between_collectors():
    parsed, other = _parsed("go = print\ngo(1)\n"), _parsed("go = print\ngo(1)\n")
    assert CallTargets.of(parsed) is CallTargets.of(parsed)
    assert CallTargets.of(parsed).receivers is Receivers.of(parsed)  # the targets read receivers through the same one
    assert CallTargets.of(other) is not CallTargets.of(parsed)
