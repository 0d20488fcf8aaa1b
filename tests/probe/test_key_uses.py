"""A kernel moved out of its factory is renamed, and its generated source shrinks by the key difference times
its uses: measured on real runs, that shrink is set apart from structure."""

from __future__ import annotations

import pytest

from tests.conftest import write_app
from warp_fix.compare import compare
from warp_fix.probe import measure

IN_FACTORY = """
import warp as wp

def make_scale():
    @wp.kernel
    def scale(a: wp.array(dtype=float), s: float):
        i = wp.tid()
        a[i] = a[i] * s
    return scale

scale = make_scale()
a = wp.full(8, 1.0, dtype=float, device="cpu")
wp.launch(scale, dim=8, inputs=[a, 2.0], device="cpu")
print("sum", float(a.numpy().sum()))
"""

AT_MODULE_SCOPE = """
import warp as wp


@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


a = wp.full(8, 1.0, dtype=float, device="cpu")
wp.launch(scale, dim=8, inputs=[a, 2.0], device="cpu")
print("sum", float(a.numpy().sum()))
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    measured = []
    for source in (IN_FACTORY, AT_MODULE_SCOPE):
        directory = tmp_path_factory.mktemp("app")
        measured.append(measure(write_app(directory, source), directory, samples=1))
    return measured


def test_key_uses_are_counted_per_kernel(reports):
    in_factory, at_scope = reports
    uses = in_factory.summary.kernel_key_uses["make_scale__locals__scale"]
    assert uses > 10 and at_scope.summary.kernel_key_uses == {"scale": uses}


def test_a_rename_alone_is_not_a_structural_win(reports):
    in_factory, at_scope = reports
    comparison = compare(in_factory, at_scope)
    before, after = comparison.structure["generated_source_bytes"]
    assert comparison.renames == [("make_scale__locals__scale", "scale")]
    assert before - after == -comparison.renamed_bytes() > 256  # all of the shrink is the rename
    assert comparison.structure["identities"] == (1, 1) and not comparison.structural_win
    assert any("come from renamed kernel keys" in note for note in comparison.notes)
