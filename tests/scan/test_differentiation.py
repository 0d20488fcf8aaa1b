"""Kernels reached from a tape or an adjoint launch anywhere in the repository, through the repository's calls."""

from __future__ import annotations

from warp_fix.scan.differentiation import differentiated_kernels

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
    assert (fit.file, fit.line, sorted(fit.callees)) == ("scripts/fit.py", 4, ["Beam", "Tape", "backward", "predict"])
    found = differentiated_kernels(index)
    # Beam(4) runs Beam.__init__ inside fit(), which holds the tape: conservatively differentiated too
    assert found.kernels == {"deflect": "scripts/fit.py:6", "summarize": "scripts/fit.py:6"}
    assert found.unresolved == []
    assert found.reaches("beams/model.py") and not found.reaches("beams/__main__.py")


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
    # the launch of an unknown kernel, and `make()`, a function passed in (the tape's whole function is followed)
    assert differentiated_kernels(index).unresolved == ["fit.py:6", "fit.py:4"]


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
