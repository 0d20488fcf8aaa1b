"""Every mechanism's own EXAMPLES, collected: diagnose each situation, and propose where it fires."""

from __future__ import annotations

import pytest

from codemods import REGISTRY
from warp_fix.mechanisms import FIX_ORDER, MECHANISMS, SLUGS
from warp_fix.mechanisms.kernel_after_load import KernelAfterLoad
from warp_fix.model import FIRED, Fix, NotProposed

EXAMPLES = [
    pytest.param(mechanism, example, id=f"{mechanism.SLUG}:{example.title}")
    for mechanism in MECHANISMS
    for example in mechanism.EXAMPLES
]


@pytest.mark.parametrize(("mechanism", "example"), EXAMPLES)
def test_example(mechanism, example) -> None:
    finding = mechanism.diagnose(example.inputs)
    assert (finding.slug, finding.status) == (mechanism.SLUG, example.status), finding.reason
    if example.reason is not None:
        assert example.reason in finding.reason, finding.reason
    proposals = list(mechanism.propose(finding, example.inputs)) if finding.status == FIRED else []
    fixes = [p for p in proposals if isinstance(p, Fix)]
    if example.fixes is not None:
        assert [(f.codemod, f.safety) for f in fixes] == list(example.fixes)
    if example.places is not None:
        assert [f.places for f in fixes] == list(example.places)
    if example.declined is not None:
        reasons = [p.reason for p in proposals if isinstance(p, NotProposed)]
        assert any(example.declined in reason for reason in reasons), reasons
    for fix in fixes:
        assert fix.slug == mechanism.SLUG
        assert fix.safety in mechanism.SAFETY, f"{fix.safety} is not among {mechanism.SLUG}'s SAFETY"
        assert fix.codemod is None or fix.codemod in mechanism.CODEMODS


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.SLUG)
def test_every_mechanism_has_an_example_that_fires_and_one_that_does_not(mechanism) -> None:
    statuses = [example.status for example in mechanism.EXAMPLES]
    assert FIRED in statuses and any(status != FIRED for status in statuses), statuses


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.SLUG)
def test_identity_is_complete_and_names_real_codemods(mechanism) -> None:
    assert mechanism.SLUG and mechanism.TITLE and mechanism.SAFETY
    assert mechanism.CS is None or mechanism.CS.startswith("CS-")
    assert set(mechanism.CODEMODS) <= set(REGISTRY), f"unknown codemods {set(mechanism.CODEMODS) - set(REGISTRY)}"


def test_the_registry_lists_each_mechanism_once_in_both_orders() -> None:
    assert len(set(SLUGS)) == len(MECHANISMS)
    assert sorted(m.SLUG for m in FIX_ORDER) == sorted(SLUGS)
    assert len({m.CS for m in MECHANISMS if m.CS}) == len([m for m in MECHANISMS if m.CS])


def test_a_fix_says_how_many_of_the_modules_builds_it_removes() -> None:
    """`Finding.all_builds` counts the builds of the modules a finding concerns: "removes 1 build of 2"."""
    example = KernelAfterLoad.EXAMPLES[0]
    finding = KernelAfterLoad().diagnose(example.inputs)
    (fix,) = [p for p in KernelAfterLoad().propose(finding, example.inputs) if isinstance(p, Fix)]
    assert (finding.extra_builds, finding.all_builds) == (1, 2)
    assert fix.expected.startswith("removes 1 build of 2")


def test_an_options_call_that_warp_fem_copies_into_its_generated_modules_is_not_called_a_no_op() -> None:
    """`__main__` holds no kernel, but warp.fem copies its options into `__main__.<integrand>_<hash>`."""
    from warp_fix.mechanisms.late_module_options import LateModuleOptions

    (example,) = [e for e in LateModuleOptions.EXAMPLES if "warp.fem" in e.title]
    finding = LateModuleOptions().diagnose(example.inputs)
    assert "no-op" not in finding.reason and not finding.facts.no_ops
    assert any("reaches 1 module generated from it" in e.detail for e in finding.evidence), finding.evidence


def test_backward_kept_for_a_tape_says_so_rather_than_that_none_had_it() -> None:
    from warp_fix.mechanisms.unused_backward import UnusedBackward

    (example,) = [e for e in UnusedBackward.EXAMPLES if "differentiated by an adjoint launch" in e.title]
    finding = UnusedBackward().diagnose(example.inputs)
    assert finding.reason == (
        "a tape or adjoint launch of this run differentiates every module with backward on (1 module)"
    )


def test_an_options_call_made_by_a_package_outside_the_repository_is_no_no_op_of_the_project() -> None:
    """A package on PYTHONPATH is no site-packages: where the call was made, not how it was installed, decides."""
    from warp_fix.mechanisms import _situation as case
    from warp_fix.mechanisms.late_module_options import LateModuleOptions

    call = case.option_change(
        "mujoco_warp._src.io", {"enable_backward": False}, loaded=False, has_kernels=False,
        site=case.site("/opt/py/mujoco_warp/_src/io.py", 29),
    )  # fmt: skip
    finding = LateModuleOptions().diagnose(case.run(builds=[case.build("sim")], option_changes=[call]))
    assert not finding.facts.no_ops and "no-op" not in finding.reason
