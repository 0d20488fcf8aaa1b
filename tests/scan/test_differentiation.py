"""Kernels reached from a tape or an adjoint launch anywhere in the repository, through the repository's calls."""

from __future__ import annotations

from warp_fix.scan.differentiation import differentiated_kernels
from warp_fix.scan.index import TypedCall

MODEL = """
    import warp as wp

    @wp.kernel
    def deflect(x: wp.array(dtype=float)):
        x[wp.tid()] += 1.0

    @wp.kernel
    def summarize(x: wp.array(dtype=float)):
        x[wp.tid()] *= 2.0

    class Beam:
        def __init__(self, n):
            self.x = wp.zeros(n, dtype=float)
            wp.launch(summarize, dim=n, inputs=[self.x])

        def predict(self):
            wp.launch(deflect, dim=self.x.shape[0], inputs=[self.x])
"""


def test_a_tape_in_another_script_reaches_the_kernels_its_calls_launch(scan):
    index = scan(
        {
            "beams/model.py": MODEL,
            "scripts/fit.py": """
                import warp as wp
                from beams.model import Beam

                def fit():
                    beam = Beam(4)
                    with wp.Tape() as tape:
                        beam.predict()
                    tape.backward()
            """,
        }
    )
    (fit,) = [c for c in index.calls if c.function == "fit"]
    # wp.Tape is Warp's API, not a call into the project; `beam` holds a Beam: its `predict`, not every `predict`
    assert (fit.file, fit.line, sorted(fit.callees)) == ("scripts/fit.py", 4, ["Beam", "backward"])
    assert fit.typed == [TypedCall("predict", "instance", "beams.model.Beam")]
    found = differentiated_kernels(index)
    # Beam(4) runs Beam.__init__ before the `with` block: the tape does not record `summarize`
    assert found.kernels == {"deflect": "scripts/fit.py:6"}
    assert found.unresolved == []
    assert found.reaches("beams/model.py") and not found.reaches("beams/__main__.py")


def test_a_method_bound_by_assignment_in_its_class_body_is_reached_by_the_methods_name(scan):
    index = scan(
        {
            "beams/model.py": """
                import warp as wp

                @wp.kernel
                def deflect(x: wp.array(dtype=float)):
                    x[wp.tid()] += 1.0

                @wp.kernel
                def settle(x: wp.array(dtype=float)):
                    x[wp.tid()] *= 2.0

                def _Beam_predict(self):
                    wp.launch(deflect, dim=self.x.shape[0], inputs=[self.x])

                def _Beam_settle(x):
                    wp.launch(settle, dim=x.shape[0], inputs=[x])

                class Beam:
                    def __init__(self, n):
                        self.x = wp.zeros(n, dtype=float)

                    predict = _Beam_predict
                    relax = staticmethod(_Beam_settle)
            """,
            "scripts/fit.py": """
                import warp as wp
                from beams.model import Beam

                def fit():
                    beam = Beam(4)
                    with wp.Tape() as tape:
                        beam.predict()
                        Beam.relax(beam.x)
                    tape.backward()
            """,
        }
    )
    bound = {c.function: c.bound_as for c in index.calls if c.file == "beams/model.py"}
    assert bound["_Beam_predict"] == ["Beam.predict"] and bound["_Beam_settle"] == ["Beam.relax"]
    found = differentiated_kernels(index)
    assert found.kernels == {"deflect": "scripts/fit.py:6", "settle": "scripts/fit.py:6"}
    assert found.unresolved == []


def test_a_tape_entered_without_a_with_block_counts_for_its_whole_function(scan):
    index = scan(
        {
            "beams/model.py": MODEL,
            "scripts/fit.py": """
                import warp as wp
                from beams.model import Beam

                def simulate(beam, tape):
                    with tape:
                        beam.predict()

                def fit():
                    tape = wp.Tape()
                    beam = Beam(4)
                    simulate(beam, tape)
                    tape.backward()
            """,
        }
    )
    (tape, backward) = index.tapes
    assert (tape.blocks, backward.blocks) == ([], [])
    # fit() hands its tape to simulate(): the whole of fit() counts, Beam(4) included
    assert differentiated_kernels(index).kernels == {"deflect": "scripts/fit.py:9", "summarize": "scripts/fit.py:9"}


def test_what_runs_after_the_with_block_is_not_recorded(scan):
    index = scan(
        {
            "walker/optim.py": """
                import warp as wp

                @wp.kernel
                def descend(p: wp.array(dtype=float)):
                    p[wp.tid()] -= 0.1

                def sgd_step(p):
                    wp.launch(descend, dim=p.shape[0], inputs=[p])
            """,
            "walker/train.py": """
                import warp as wp
                from walker.optim import sgd_step

                @wp.kernel
                def loss_of(p: wp.array(dtype=float), loss: wp.array(dtype=float)):
                    wp.atomic_add(loss, 0, p[wp.tid()])

                def train(p, loss):
                    tape = wp.Tape()
                    with tape:
                        wp.launch(loss_of, dim=p.shape[0], inputs=[p, loss])
                    tape.backward(loss)
                    sgd_step(p)
            """,
        }
    )
    (tape, backward) = index.tapes
    assert [(b.first, b.last, b.callees) for b in tape.blocks] == [(11, 11, [])]  # its wp.launch is a launch site
    assert backward.blocks == tape.blocks
    found = differentiated_kernels(index)
    assert found.kernels == {"loss_of": "walker/train.py:9"}
    assert found.reaches("walker/train.py") and not found.reaches("walker/optim.py")


def test_forward_only_code_and_an_adjoint_launch(scan):
    index = scan(
        {
            "beams/model.py": MODEL,
            "run.py": """
                import warp as wp
                from beams.model import Beam, summarize

                def main(x, grad):
                    Beam(4).predict()
                    wp.launch(summarize, dim=4, inputs=[x], adjoint=grad)
            """,
        }
    )
    found = differentiated_kernels(index)
    # `adjoint=grad` may be true at run time: main() is followed, and reaches predict and __init__
    assert set(found.kernels) == {"deflect", "summarize"}


def test_nothing_differentiates_without_a_tape(scan):
    index = scan({"beams/model.py": MODEL, "run.py": "from beams.model import Beam\n\nBeam(4).predict()\n"})
    assert differentiated_kernels(index).kernels == {}


def test_a_launch_under_a_tape_whose_kernel_is_unknown_is_kept_as_unresolved(scan):
    index = scan(
        {
            "fit.py": """
                import warp as wp

                def fit(make):
                    kernel = make()
                    with wp.Tape():
                        wp.launch(kernel, dim=4, inputs=[])
            """
        }
    )
    # the launch of an unknown kernel; `make()`, a function passed in, runs before the `with` block: not recorded
    assert differentiated_kernels(index).unresolved == ["fit.py:6"]


def test_a_function_passed_in_and_called_under_a_tape_cannot_be_followed(scan):
    """warpSPHCore's shape: a tape runs `function(*args)`, whatever the caller handed in; every module may be
    differentiated, so the walk says it could not follow the call instead of finding nothing."""
    index = scan(
        {
            "beams/model.py": MODEL,
            "beams/autograd.py": """
                import warp as wp

                def gradient_of(function, *args):
                    with wp.Tape() as tape:
                        function(*args)
                    tape.backward()
                    return tape
            """,
        }
    )
    (call,) = [c for c in index.calls if c.function == "gradient_of"]
    assert call.dynamic == ["5: function(...)"] and "function" not in call.callees
    found = differentiated_kernels(index)
    assert found.unresolved == ["beams/autograd.py:5"]


def test_a_context_manager_that_yields_inside_its_tape_records_its_callers_block(scan):
    """nvalchemiops' shape: `with WarpAutogradContextManager(flag) as tape: wp.launch(...)`, the tape made and
    entered inside the `@contextmanager`."""
    index = scan(
        {
            "ops/autograd.py": """
                from contextlib import contextmanager

                import warp as wp

                @contextmanager
                def recording(enable):
                    if enable:
                        tape = wp.Tape()
                        with tape:
                            yield tape
                    else:
                        yield None
            """,
            "ops/energy.py": """
                import warp as wp
                from ops.autograd import recording

                @wp.kernel
                def pair_energy(x: wp.array(dtype=float), e: wp.array(dtype=float)):
                    wp.atomic_add(e, 0, x[wp.tid()] * x[wp.tid()])

                @wp.kernel
                def clear(e: wp.array(dtype=float)):
                    e[0] = 0.0

                def energy(x, e, grad):
                    with recording(grad) as tape:
                        wp.launch(pair_energy, dim=x.shape[0], inputs=[x, e])
                    return tape

                def reset(e):
                    wp.launch(clear, dim=1, inputs=[e])
            """,
        }
    )
    (tape,) = [t for t in index.tapes if t.kind == "tape"]
    assert [b.yields for b in tape.blocks] == [True]
    found = differentiated_kernels(index)
    assert found.kernels == {"pair_energy": "ops/autograd.py:8"}
    assert found.reaches("ops/energy.py")


SHADE = """
    import warp as wp

    @wp.kernel
    def shade(x: wp.array(dtype=float)):
        x[wp.tid()] = 0.5
"""

PROBE = """
    import warp as wp
    from beams.model import Beam

    def probe(method):
        beam = Beam(4)
        with wp.Tape() as tape:
            getattr(beam, method)()
        tape.backward()
"""


def test_a_tape_whose_call_cannot_be_followed_reaches_only_what_its_script_imports(scan):
    """`getattr(beam, method)()` runs a method of something the script has: code of a file it imports."""
    index = scan({"beams/__init__.py": "", "beams/model.py": MODEL, "beams/render.py": SHADE, "probe.py": PROBE})
    (tape,) = differentiated_kernels(index).unresolved_tapes
    assert [str(call) for call in tape.calls] == ["getattr(beam, method)(...) at probe.py:7"]
    assert tape.may_reach(["beams/model.py"]) and not tape.may_reach(["beams/render.py"])


def test_a_package_init_that_never_says_warp_still_brings_in_its_modules(scan):
    """The prefilter skips `beams/__init__.py`, but importing beams.model runs it, and it imports beams.render."""
    init = '"""Beams."""\n\nfrom . import render\nfrom .model import Beam\n'
    index = scan({"beams/__init__.py": init, "beams/model.py": MODEL, "beams/render.py": SHADE, "probe.py": PROBE})
    assert next(f for f in index.files if f.file == "beams/__init__.py").mentions_warp is False
    (tape,) = differentiated_kernels(index).unresolved_tapes
    assert tape.may_reach(["beams/render.py"])


def test_a_callback_comes_from_the_functions_callers(scan):
    """`gradient_of(function)` runs what its callers pass: the files of callers that import it, and their imports."""
    wrapper = "import warp as wp\n\ndef gradient_of(function):\n    with wp.Tape() as tape:\n        function()\n"
    caller = "from beams.autograd import gradient_of\nfrom beams.render import shade\n\ngradient_of(lambda: 0)\n"
    unrelated = "import warp as wp\n\ndef run():\n    gradient_of()\n"  # same name, never imports the wrapper
    index = scan({"beams/__init__.py": "", "beams/autograd.py": wrapper, "beams/render.py": SHADE,
                  "beams/model.py": MODEL, "fit.py": caller, "other.py": unrelated})
    (tape,) = differentiated_kernels(index).unresolved_tapes
    assert tape.may_reach(["beams/render.py"]) and not tape.may_reach(["beams/model.py"])


def test_a_tape_kept_on_an_attribute_records_where_the_methods_enter_it(scan):
    """`self.tape = wp.Tape() if grad else None` in __init__ (an optimizer's shape): the constructor's own calls are
    not recorded; what the method that enters `with self.tape:` launches and calls is."""
    index = scan(
        {
            "beams/model.py": MODEL,
            "beams/optimizer.py": """
                import warp as wp
                from beams.model import Beam

                class Optimizer:
                    def __init__(self, grad=True):
                        self.beam = Beam(4)
                        self.tape = wp.Tape() if grad else None

                    def residuals(self):
                        self.tape.reset()
                        with self.tape:
                            self.beam.predict()
                        self.tape.backward()
            """,
        }
    )
    (tape,) = [t for t in index.tapes if t.kind == "tape"]
    assert (tape.function, tape.receiver, tape.line) == ("Optimizer.residuals", "self.tape", 11)
    found = differentiated_kernels(index)
    assert found.kernels == {"deflect": "beams/optimizer.py:11"}  # not summarize, which __init__'s Beam(4) launches
    assert found.unresolved_tapes == []


def test_a_call_into_warp_is_not_followed_to_project_functions_of_the_same_name(scan):
    """`wp.copy(...)` under a tape runs Warp's copy, not the project's `Rod.copy`, whose launch no tape records."""
    index = scan(
        {
            "rods/rod.py": """
                import warp as wp

                @wp.kernel
                def straighten(x: wp.array(dtype=float)):
                    x[wp.tid()] = 0.0

                class Rod:
                    def copy(self):
                        wp.launch(straighten, dim=1, inputs=[self.x])
            """,
            "scripts/fit.py": """
                import warp as wp

                @wp.kernel
                def loss(x: wp.array(dtype=float)):
                    x[wp.tid()] *= 2.0

                def fit(x, y):
                    with wp.Tape() as tape:
                        wp.copy(y, x)
                        wp.launch(loss, dim=1, inputs=[y])
                    tape.backward()
            """,
        }
    )
    found = differentiated_kernels(index)
    assert found.kernels == {"loss": "scripts/fit.py:8"}


def test_a_call_on_self_runs_its_own_class_method_not_every_method_of_that_name(scan):
    """Two examples each define `Example.forward`; a tape over `self.forward()` in one runs that file's method."""
    example = """
        import warp as wp

        @wp.kernel
        def {kernel}(x: wp.array(dtype=float)):
            x[wp.tid()] += 1.0

        class Example:
            def forward(self):
                wp.launch({kernel}, dim=1, inputs=[self.x])

            def {entry}(self):
                {body}
    """
    index = scan(
        {
            "examples/fit.py": example.format(
                kernel="throw", entry="train", body="with wp.Tape() as tape:\n                    self.forward()"
            ),
            "examples/show.py": example.format(kernel="shade", entry="render", body="self.forward()"),
        }
    )
    found = differentiated_kernels(index)
    assert set(found.kernels) == {"throw"}
    assert not found.reaches("examples/show.py")



LOCAL_STEP = """
    import warp as wp
    from beams.model import Beam, summarize

    def test_settles():
        beam = Beam(4)

        def predict():  # only this test can name it
            wp.launch(summarize, dim=4, inputs=[beam.x])

        predict()
"""


def test_a_local_function_that_never_leaves_its_test_is_not_every_call_of_its_name(scan):
    """`beam.predict()` under a tape in one test does not run another test's local `def predict():`: only code
    inside that test can name it. The tape reaches `Beam.predict` (deflect), not the local one (summarize)."""
    index = scan(
        {
            "beams/model.py": MODEL,
            "tests/test_settle.py": LOCAL_STEP,
            "tests/test_grad.py": """
                import warp as wp
                from beams.model import Beam

                def test_gradient():
                    beam = Beam(4)
                    with wp.Tape():
                        beam.predict()
            """,
        }
    )
    (local,) = [c for c in index.calls if c.function == "test_settles.<locals>.predict"]
    assert local.enclosed_in == "test_settles"
    found = differentiated_kernels(index)
    assert found.kernels == {"deflect": "tests/test_grad.py:6"}
    assert ("tests/test_settle.py", "test_settles.<locals>.predict") not in found.scopes


def test_a_local_function_called_under_a_tape_in_its_own_function_is_followed(scan):
    taped = LOCAL_STEP.replace("        predict()\n", "        with wp.Tape():\n            predict()\n")
    found = differentiated_kernels(scan({"beams/model.py": MODEL, "tests/test_settle.py": taped}))
    # the local one only: a bare `predict()` reads the name the test binds, never a method `Beam.predict`
    assert found.kernels == {"summarize": "tests/test_settle.py:10"}


def test_a_local_function_that_is_returned_can_be_called_from_anywhere_by_name(scan):
    """`make_predict()` returns its local `predict`: whoever holds it may call it as `model.predict()`."""
    index = scan(
        {
            "beams/model.py": MODEL,
            "beams/factory.py": """
                import warp as wp
                from beams.model import summarize

                def make_predict(x):
                    def predict():
                        wp.launch(summarize, dim=1, inputs=[x])

                    return predict
            """,
            "scripts/fit.py": """
                import warp as wp

                def fit(model):
                    with wp.Tape():
                        model.predict()
            """,
        }
    )
    (local,) = [c for c in index.calls if c.function == "make_predict.<locals>.predict"]
    assert local.enclosed_in is None
    assert differentiated_kernels(index).kernels == {"deflect": "scripts/fit.py:4", "summarize": "scripts/fit.py:4"}


def test_a_call_followed_by_name_to_several_functions_is_the_condition_of_what_it_reaches(scan):
    index = scan(
        {
            "beams/model.py": MODEL,
            "beams/viewer.py": """
                import warp as wp

                @wp.kernel
                def shade(x: wp.array(dtype=float)):
                    x[wp.tid()] = 0.0

                class Viewer:
                    def predict(self, x):
                        wp.launch(shade, dim=x.shape[0], inputs=[x])
            """,
            "scripts/fit.py": """
                import warp as wp
                from beams.model import Beam

                def fit(beam):
                    with wp.Tape() as tape:
                        beam.predict()
                    tape.backward()
            """,
        }
    )
    found = differentiated_kernels(index)
    # `beam.predict()` on a parameter: every `predict` of the repository may run, each only if it is the one called
    assert found.kernels == {"deflect": "scripts/fit.py:5", "shade": "scripts/fit.py:5"}
    hop = found.by_name["shade"]
    assert (hop.callee, hop.candidates, hop.reached) == ("predict", 2, ("beams/viewer.py", "Viewer.predict"))
    assert hop.condition() == (
        "if its call of `predict` in fit (scripts/fit.py) runs one of the functions named `predict` that lead there "
        "(it is followed by name to all 2; Viewer.predict (beams/viewer.py) is one that does)"
    )


def test_calls_that_each_name_one_function_reach_their_kernels_unconditionally(scan):
    index = scan({"beams/model.py": MODEL, "scripts/fit.py": "import warp as wp\nfrom beams.model import Beam\n\n"
                  "def fit(beam):\n    with wp.Tape():\n        beam.predict()\n"})
    found = differentiated_kernels(index)
    assert found.kernels == {"deflect": "scripts/fit.py:5"} and found.by_name == {}
