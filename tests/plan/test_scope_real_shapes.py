"""The scope on real runs: optional plugin code is left alone by every mechanism, whatever the shape that picks it
(a registry of plugin classes, a branch on the kind an object was given)."""

from __future__ import annotations


def test_no_mechanism_edits_plugin_code_and_the_projects_own_module_keeps_its_fix(plan_of):
    plan = plan_of("plugin_transforms")
    edited = {file for fix in plan.fixes for file in fix.files}
    assert edited == {"imaging/stats.py"}
    (fix,) = plan.fixes
    assert (fix.slug, fix.codemod, fix.safety) == ("unused-backward", "module_options", "safe")
    fired = {f.slug for f in plan.findings if f.status == "fired"}
    assert {"kernel-after-load", "unused-backward"} <= fired
    reasons = {(n.slug, n.reason) for n in plan.not_proposed}
    assert any(slug == "kernel-after-load" and "blur is an entry of the registry TRANSFORMS" in reason
               for slug, reason in reasons), reasons
    assert any(slug == "kernel-after-load" and "edge is made only in a branch on self.kind" in reason
               for slug, reason in reasons), reasons
    for module in ("imaging.transforms", "imaging.filters"):
        assert any(slug == "unused-backward" and reason.startswith(f"{module} holds optional kernels")
                   and " ms measured" in reason for slug, reason in reasons), reasons
