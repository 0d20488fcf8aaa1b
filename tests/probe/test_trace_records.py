"""The trace file's new records read into the Report, old reports still load, and in-run cache clears explained."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, PYTHON
from warp_fix.probe.trace_file import read_trace
from warp_fix.probe.why import explain_rebuilds
from warp_fix.report import CacheOp, LtoBuild, ModuleBuild, Site, Trace, load_report, report_from_json


def write_trace(directory, events) -> None:
    lines = [{"type": "start", "seq": 0, "pid": 1, "t_ms": 0.0, "executable": "python"}, *events]
    lines.append({"type": "end", "seq": 99, "pid": 1, "launch_count": 0, "launch_digest": ""})
    (directory / "trace-1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))


def site(path, line, function="<module>"):
    return {"file": str(path), "line": line, "function": function, "stack": []}


def build_event(root, seq, module="tiles", lto=0) -> dict:
    return {
        "type": "build", "seq": seq, "pid": 1, "t_ms": 1.0, "module": module, "hash": "ab" * 32, "device": "cuda:0",
        "block_dim": 64, "status": "compiled", "module_ms": 5.0, "native_ms": 4.0, "options": {},
        "kernels": ["gemm"], "generics": [], "cache_dir": "/c", "site": site(root / "app.py", 9),
        "lto_builds": lto, "lto_kinds": ["dot"] if lto else [],
        "kernel_sources": [{
            "key": "gemm", "file": str(root / "pkg" / "tiles.py"), "line": 4, "function": "gemm", "qualname": "gemm",
            "module_kind": "file", "options": {}, "enable_backward": True, "adjoint": True,
            "created": site(root / "pkg" / "tiles.py", 4),
        }],
        "source_files": [str(root / "pkg" / "tiles.py")], "module_kind": "file", "adjoint_kernels": 1,
        "option_sources": {"enable_backward": {"kind": "set_module_options", "site": site(root / "app.py", 3)}},
    }


def test_lto_builds_are_events_with_module_time_and_site(tmp_path):
    root = tmp_path
    write_trace(root, [
        {"type": "lto_build", "seq": 1, "pid": 1, "kind": "dot", "module": "tiles", "ms": 812.5,
         "site": site(root / "app.py", 9), "symbol": "dot_64_64_64", "compiled": True},
        {"type": "lto_build", "seq": 2, "pid": 1, "kind": "dot", "module": "tiles", "ms": 790.0,
         "site": site(root / "app.py", 9), "symbol": "dot_64_64_32", "compiled": False},
        build_event(root, 3, lto=2),
    ])
    trace, _ = read_trace(root, root)
    assert [(e.kind, e.module, e.ms, e.site.file, e.site.line, e.compiled) for e in trace.lto_builds] == [
        ("dot", "tiles", 812.5, "app.py", 9, True),
        ("dot", "tiles", 790.0, "app.py", 9, False),
    ]
    (build,) = trace.builds
    assert build.lto_builds == len(trace.lto_builds)


def test_kernel_sources_and_option_sources_are_named_relative_to_the_project(tmp_path):
    write_trace(tmp_path, [build_event(tmp_path, 1)])
    (build,) = read_trace(tmp_path, tmp_path)[0].builds
    (kernel,) = build.kernel_sources
    assert (kernel.file, kernel.created.file, build.source_files) == ("pkg/tiles.py", "pkg/tiles.py", ["pkg/tiles.py"])
    assert build.option_source("enable_backward").site == Site("app.py", 3, "<module>")
    assert build.option_source("max_unroll").kind == "default"


def test_a_kernel_recorded_without_its_argument_verdict_counts_as_differentiable(tmp_path):
    integer_only = build_event(tmp_path, 2, module="hashing")
    integer_only["kernel_sources"][0]["differentiable_arguments"] = False
    write_trace(tmp_path, [build_event(tmp_path, 1), integer_only])
    older, recorded = read_trace(tmp_path, tmp_path)[0].builds
    assert older.kernel_sources[0].differentiable_arguments is True
    assert recorded.kernel_sources[0].differentiable_arguments is False


def two_builds(status="compiled", second_hash="ab" * 32) -> list[ModuleBuild]:
    def build(seq, hash_):
        return ModuleBuild(seq, 0.0, "m", hash_, "cpu", 1, status, 3.0, 2.0, {}, ["k"], [], None, None)

    return [build(1, "ab" * 32), build(3, second_hash)]


def test_same_identity_compiled_again_after_an_in_run_clear_names_the_clear():
    clear_site = Site("app.py", 12, "reset")
    trace = Trace(builds=two_builds(), cache_ops=[CacheOp(2, "clear_kernel_cache", None, clear_site)])
    (rebuild,) = explain_rebuilds(trace)
    (reason,) = rebuild.reasons
    assert reason.kind == "cache-cleared" and reason.site == clear_site
    assert "clear_kernel_cache()" in reason.detail


def test_identity_reloaded_from_cache_after_a_clear_is_an_unload_not_a_cleared_cache():
    trace = Trace(builds=two_builds(status="cached"), cache_ops=[CacheOp(2, "clear_lto_cache", None, None)])
    (rebuild,) = explain_rebuilds(trace)
    assert [r.kind for r in rebuild.reasons] == ["unloaded"]


def relinked_run(clear: bool, compiled: bool = True) -> Trace:
    """Module `a` links dot_64 at seq 1; after an optional clear_lto_cache, module `b` links it again."""
    a, b = two_builds()
    a.seq, b.seq, b.module = 2, 6, "b"
    clears = [CacheOp(3, "clear_lto_cache", None, Site("app.py", 20, "reset"))] if clear else []
    return Trace(
        builds=[a, b],
        cache_ops=clears,
        lto_builds=[
            LtoBuild(1, "dot", "m", 900.0, None, "dot_64", True),
            LtoBuild(4, "dot", "b", 850.0, None, "dot_64", compiled),
            LtoBuild(5, "dot", "b", 10.0, None, "dot_32", True),
        ],
    )


def test_lto_symbol_linked_again_after_an_in_run_clear_names_the_clear_on_the_build_that_paid():
    (rebuild,) = explain_rebuilds(relinked_run(clear=True))
    assert (rebuild.module, rebuild.build_seq, rebuild.module_ms) == ("b", 6, 850.0)
    (reason,) = rebuild.reasons
    assert reason.kind == "cache-cleared" and reason.site == Site("app.py", 20, "reset")
    assert "dot_64" in reason.detail


def test_lto_links_without_a_clear_or_from_the_cache_are_not_blamed_on_a_clear():
    assert explain_rebuilds(relinked_run(clear=False)) == []
    assert explain_rebuilds(relinked_run(clear=True, compiled=False)) == []


def test_a_report_written_before_these_fields_still_loads(tmp_path):
    from warp_fix.probe import measure

    report = measure([PYTHON, "-m", "smoothing"], FIXTURES / "factory_call_site", samples=1)
    data = json.loads(json.dumps(report.to_json(), default=str))
    data.pop("cache_dir_evidence")
    for build in data["trace"]["builds"]:
        for name in ("kernel_sources", "source_files", "module_kind", "adjoint_kernels", "option_sources"):
            build.pop(name)
    for kernel_def in data["trace"]["kernel_defs"]:
        for name in ("qualname", "module_kind", "options", "created"):
            kernel_def.pop(name)
    data["trace"].pop("lto_builds")
    old = report_from_json(data)
    assert old.cache_dir_evidence is None and old.trace.lto_builds == []
    assert old.trace.builds[0].kernel_sources == [] and old.trace.builds[0].adjoint_kernels is None

    path = tmp_path / "report.json"
    report.save(path)
    again = load_report(path)
    assert again.trace.builds == report.trace.builds and again.cache_dir_evidence == report.cache_dir_evidence
    assert again.trace.kernel_defs == report.trace.kernel_defs


@pytest.mark.cuda
def test_tile_fixture_counts_each_lto_build_as_an_event():
    """On CUDA (run by hand on a GPU machine): every `build_lto_*` call is one event of a build that linked."""
    import warp as wp

    if not wp.is_cuda_available():
        pytest.skip("needs a CUDA device")
    from warp_fix.probe import measure

    report = measure([PYTHON, "-m", "mlp"], FIXTURES / "gpu_tile_backward", samples=1)
    events = report.trace.lto_builds
    assert events and all(e.kind == "dot" and e.ms > 0 for e in events)
    assert all(e.symbol.startswith("dot_") for e in events if e.compiled is not None)
    assert len(events) == sum(b.lto_builds for b in report.trace.builds)
    assert {e.module for e in events} == {b.module for b in report.trace.builds if b.lto_builds}
