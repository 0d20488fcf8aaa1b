"""The run's own evidence of differentiation: what a tape recorded and what its backward pass launched, per module,
wherever the launch came from and however many launches came before it."""

from __future__ import annotations

from tests.conftest import write_app
from warp_fix.probe import measure

HELPERS = """
import warp as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def forward(x, y):
    wp.launch(square, dim=x.shape[0], inputs=[x], outputs=[y], device="cpu")
"""

TRAIN = """
import warp as wp

from helpers import forward


@wp.kernel
def settle(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 0.0


x = wp.ones(4, dtype=float, device="cpu", requires_grad=True)
y = wp.zeros(4, dtype=float, device="cpu", requires_grad=True)
for _ in range(2100):  # more launches than the trace keeps in detail
    wp.launch(settle, dim=4, inputs=[x], device="cpu")
tape = wp.Tape()
with tape:
    forward(x, y)
tape.backward(grads={y: wp.ones(4, dtype=float, device="cpu")})
print("grad", x.grad.numpy())
"""


def test_a_tape_recording_a_helpers_kernel_and_its_backward_are_recorded_past_the_detail_cap(tmp_path):
    write_app(tmp_path, HELPERS, "helpers.py")
    report = measure(write_app(tmp_path, TRAIN, "train.py"), tmp_path, samples=1)
    uses = {(use.kind, use.module, use.kernel) for use in report.trace.gradient_uses}
    assert uses == {("recorded", "helpers", "square"), ("adjoint", "helpers", "square")}
    recorded = next(use for use in report.trace.gradient_uses if use.kind == "recorded")
    assert (recorded.site.file, recorded.site.function) == ("helpers.py", "forward")
    assert report.trace.launch_count > 2000 and not any(launch.adjoint for launch in report.trace.launches)
