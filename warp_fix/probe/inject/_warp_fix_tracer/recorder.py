"""Writing events, and finding the user-code frame each one comes from (standard library only)."""

from __future__ import annotations

import contextlib
import functools
import json
import linecache
import os
import sys
import threading
import time

USER_STACK_DEPTH = 4
CREATION_STACK_DEPTH = 48  # frames kept of the stack that created a Warp module

_INJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Recorder:
    """Numbers events, stamps them with time, and appends them to this process's trace file."""

    def __init__(self, directory: str, t0: float):
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = t0
        self._file = open(os.path.join(directory, f"trace-{os.getpid()}.jsonl"), "a", buffering=1)  # noqa: SIM115

    def now_ms(self) -> float:
        return (time.time() - self._t0) * 1000.0

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def emit(self, event: str, **fields) -> None:
        fields.setdefault("seq", self.next_seq())
        fields["type"] = event
        fields["pid"] = os.getpid()
        line = json.dumps(fields, default=_jsonable)
        with self._lock:
            self._file.write(line + "\n")

    def error(self, where: str, exc: BaseException) -> None:
        with contextlib.suppress(Exception):
            self.emit("tracer_error", message=f"{where}: {type(exc).__name__}: {exc}")


def _jsonable(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)


def plain(value):
    """A JSON-friendly copy of an option value (enums and objects become their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return repr(value)


def type_name(t) -> str:
    return getattr(t, "__name__", None) or repr(t)


class SiteFinder:
    """Finds the first stack frame that belongs to user code (not Warp, not warp-fix)."""

    def __init__(self, warp_dir: str):
        self._warp = warp_dir + os.sep
        self._skip = (self._warp, _INJECT_DIR + os.sep)
        self._stdlib = os.path.dirname(functools.__file__) + os.sep
        self._project = os.path.realpath(os.getcwd()) + os.sep  # the measured command's directory
        self._cache: dict[str, bool] = {}
        self._in_project: dict[str, bool] = {}

    def is_user(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            in_stdlib = path.startswith(self._stdlib) and "-packages" + os.sep not in path
            known = not (
                filename.startswith("<")
                or in_stdlib
                or path.startswith(self._skip)
                or os.sep + "warp_fix" + os.sep in path
            )
            self._cache[filename] = known
        return known

    def is_library(self, filename: str) -> bool:
        """Code of an installed package (site-packages, or Warp's own modules such as warp.render)."""
        path = os.path.abspath(filename)
        return path.startswith(self._warp) or os.sep + "site-packages" + os.sep in path or (
            os.sep + "dist-packages" + os.sep in path
        )

    def is_project(self, filename: str) -> bool:
        """A file under the measured command's directory that is not an installed package (a venv inside it)."""
        known = self._in_project.get(filename)
        if known is None and filename.startswith("<"):  # `<frozen runpy>`, `<string>`: no file, whatever the cwd
            known = self._in_project[filename] = False
        if known is None:
            path = os.path.realpath(filename)
            known = self._in_project[filename] = path.startswith(self._project) and not self.is_library(path)
        return known

    def _project_frame(self, outer, stack: list[str]) -> list[str]:
        """Where a launch deep inside a library was made from in the project: the first project frame past the
        `depth` frames kept, so the site still names the project's line (`mjw.step(m, d)` under five frames of
        the library); nothing when a kept frame is the project's already."""
        if any(self.is_project(frame.rsplit(":", 2)[0]) for frame in stack):
            return []
        while outer is not None and not self.is_project(outer.f_code.co_filename):
            outer = outer.f_back
        if outer is None:
            return []
        return [f"{outer.f_code.co_filename}:{outer.f_lineno}:{outer.f_code.co_name}"]

    @staticmethod
    def caller(level: int):
        """The frame `level` calls above the function calling this, whoever's code it is."""
        frame = sys._getframe(level + 1)
        return {"file": frame.f_code.co_filename, "line": frame.f_lineno, "function": frame.f_code.co_name}

    def creation_stack(self) -> list[dict]:
        """Every user frame on the stack, innermost first, each with its source line as the run reads it: where a
        Warp module is created, the import chain (or the call) down from the entry script's top-level statement.
        A very deep stack keeps its innermost frame and its outermost ones, where the entry script is."""
        frames = []
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if self.is_user(filename):
                line = frame.f_lineno or 0
                text = linecache.getline(filename, line).strip() if line else ""
                frames.append({"file": filename, "line": line, "function": frame.f_code.co_name, "text": text})
            frame = frame.f_back
        if len(frames) > CREATION_STACK_DEPTH:
            frames = frames[:1] + frames[1 - CREATION_STACK_DEPTH :]
        return frames

    def site(self, depth: int = USER_STACK_DEPTH):
        frame = sys._getframe(1)
        while frame is not None and not self.is_user(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return None
        first = frame
        stack = []
        outer = frame.f_back
        while outer is not None and len(stack) < depth - 1:
            if self.is_user(outer.f_code.co_filename):
                stack.append(f"{outer.f_code.co_filename}:{outer.f_lineno}:{outer.f_code.co_name}")
            outer = outer.f_back
        if not self.is_project(first.f_code.co_filename):
            stack += self._project_frame(outer, stack)
        return {
            "file": first.f_code.co_filename,
            "line": first.f_lineno,
            "function": first.f_code.co_name,
            "stack": stack,
        }
