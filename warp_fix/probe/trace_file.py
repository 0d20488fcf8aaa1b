"""Reads the tracer's JSON-lines files into a Trace, with paths made relative to the project."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from warp_fix.report import (
    CacheOp,
    GradientUse,
    KernelTime,
    Launch,
    LoadCall,
    LtoBuild,
    OverloadCall,
    TapeUse,
    Trace,
    kernel_def_from_json,
    module_build_from_json,
    option_change_from_json,
    with_site,
)

# event type -> (Trace list, constructor from the event's JSON, with project paths made relative)
_EVENT_TYPES = {
    "build": ("builds", module_build_from_json),
    "launch": ("launches", lambda e: with_site(Launch, e)),
    "option_change": ("option_changes", option_change_from_json),
    "cache_op": ("cache_ops", lambda e: with_site(CacheOp, e)),
    "kernel_def": ("kernel_defs", kernel_def_from_json),
    "overload": ("overloads", lambda e: with_site(OverloadCall, e)),
    "tape": ("tapes", lambda e: with_site(TapeUse, e)),
    "gradient_use": ("gradient_uses", lambda e: with_site(GradientUse, e)),
    "load_call": ("load_calls", lambda e: with_site(LoadCall, e)),
    "lto_build": ("lto_builds", lambda e: with_site(LtoBuild, e)),
}
# the places in an event that name a source file
_SITE_FIELDS = ("site", "created", "caller")


@dataclass(frozen=True)
class TracedProcess:
    """One process of the command the tracer ran in (a test suite starts many): named where a build happened."""

    pid: int
    argv: tuple[str, ...]  # as the process had it at exit (at start when it never got there)
    xdist_worker: str  # pytest-xdist's worker id ("gw0"), "" for any other process

    @property
    def label(self) -> str:
        if self.xdist_worker:
            return f"pytest-xdist worker {self.xdist_worker} (pid {self.pid})"
        return f"{' '.join(self.argv) or 'python'} (pid {self.pid})"


class TraceFacts:
    """What a trace directory says beyond the Trace: was the tracer there, did Warp load, which process built what."""

    def __init__(self) -> None:
        self.tracer_started = False
        self.warp_imported = False
        self.executables: list[str] = []
        self.build_process: dict[int, TracedProcess] = {}  # a build's seq -> the process that loaded it


def read_trace(directory: Path, project_root: Path) -> tuple[Trace, TraceFacts]:
    trace = Trace()
    facts = TraceFacts()
    processes = []
    for path in sorted(directory.glob("trace-*.jsonl")):
        events = [json.loads(line) for line in _lines(path)]
        start = next((e.get("t_ms", 0.0) for e in events if e["type"] == "start"), 0.0)
        processes.append((start, events))
    seq = 0
    root = os.path.realpath(project_root)
    for _, events in sorted(processes, key=lambda p: p[0]):
        ended = False
        process = _process(events, root)
        for event in sorted(events, key=lambda e: e.get("seq", 0)):
            kind = event.pop("type")
            event.pop("pid", None)
            if kind == "start":
                facts.tracer_started = True
                facts.executables.append(event.get("executable", ""))
            elif kind == "warp_import":
                facts.warp_imported = True
                trace.warp_version = event.get("warp_version", "")
                trace.tracer_mode = event.get("tracer_mode", "objects")
            elif kind == "tracer_error":
                trace.tracer_errors.append(event["message"])
            elif kind == "kernel_time":
                for module, time in event.get("modules", {}).items():
                    trace.kernel_times.append(KernelTime(module, time["ms"], time["launches"]))
            elif kind == "end":
                ended = True
                trace.cuda_toolkit = event.get("cuda_toolkit") or trace.cuda_toolkit
                trace.main_file = event.get("main_file") or trace.main_file  # the outermost process ends last
                trace.launch_count += event.get("launch_count", 0)
                trace.launch_digest = _combine(trace.launch_digest, event.get("launch_digest", ""))
            elif kind in _EVENT_TYPES:
                seq += 1
                event["seq"] = seq
                _relative_sources(event, root)
                name, make = _EVENT_TYPES[kind]
                getattr(trace, name).append(make(event))
                if kind == "build":
                    facts.build_process[seq] = process
        if events and not ended:
            trace.complete = False
    if not trace.complete and trace.launch_count < len(trace.launches):
        trace.launch_count = len(trace.launches)
    return trace, facts


def _process(events: list[dict], root: str) -> TracedProcess:
    start = next((e for e in events if e["type"] == "start"), {})
    end = next((e for e in events if e["type"] == "end"), {})
    argv = end.get("argv") or start.get("argv") or ()
    pid = start.get("pid") or next((e.get("pid") for e in events if e.get("pid")), 0)
    arguments = tuple(_relative_argument(str(a), root) for a in argv)
    return TracedProcess(int(pid), arguments, str(end.get("xdist_worker", "")))


def _relative_argument(argument: str, root: str) -> str:
    return relative_path(argument, root) if os.path.isabs(argument) else argument


def _lines(path: Path):
    with path.open() as handle:
        for line in handle:
            if line.endswith("\n"):  # a torn last line (killed process) is dropped
                yield line


def _combine(previous: str, digest: str) -> str:
    return digest if not previous else f"{previous}+{digest}"


def _relative_sources(event: dict, root: str) -> None:
    """Every site, kernel source file and option source of an event, named relative to the project."""
    for item in [event, *event.get("kernel_sources", ()), *event.get("option_sources", {}).values()]:
        for name in _SITE_FIELDS:
            if item.get(name):
                item[name] = _relative_site(item[name], root)
    for frame in [*event.get("kernel_sources", ()), *event.get("creation_stack", ())]:
        frame["file"] = relative_path(frame["file"], root)
    if "source_files" in event:
        event["source_files"] = sorted({relative_path(f, root) for f in event["source_files"]})


def _relative_site(data: dict, root: str) -> dict:
    return {
        **data,
        "file": relative_path(data["file"], root),
        "stack": [_relative_frame(frame, root) for frame in data.get("stack", ())],
    }


def relative_path(path: str, root: str) -> str:
    """Project files are named relative to the project root, so two checkouts compare equal."""
    real = os.path.realpath(path)
    if real == root or real.startswith(root + os.sep):
        return Path(os.path.relpath(real, root)).as_posix()
    return path


def _relative_frame(frame: str, root: str) -> str:
    path, _, rest = frame.partition(":")
    return f"{relative_path(path, root)}:{rest}"
