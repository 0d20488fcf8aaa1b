"""ApplyRequest: the command-line flags merged over `[tool.warp-fix]` (flags win)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from warp_fix.apply.errors import ApplyError
from warp_fix.config import ConfigError, ProjectConfig, load_config

DEFAULT_SAMPLES = 3  # the most interleaved samples per arm a timing claim may use


@dataclass(frozen=True)
class ApplyRequest:
    command: tuple[str, ...]
    cwd: Path
    branch: str | None
    test: str | None
    samples: int
    allow: frozenset[str]
    only: frozenset[str]
    protected: tuple[str, ...]
    timeout: float | None
    dry_run: bool = False
    allow_nondeterministic_output: bool = False
    output_tolerance: float | None = None  # relative; replaces the tolerances learned from the baseline
    seconds_per_fix: float | None = None  # a timing-decided fix stops sampling once it has used this much


def build_request(
    *,
    command: list[str] | None,
    cwd: str | Path,
    branch: str | None,
    test: str | None = None,
    samples: int | None = None,
    allow: list[str] | None = None,
    only: list[str] | None = None,
    timeout: float | None = None,
    dry_run: bool = False,
    allow_nondeterministic_output: bool = False,
    output_tolerance: float | None = None,
    seconds_per_fix: float | None = None,
) -> ApplyRequest:
    directory = Path(cwd).resolve()
    if not directory.is_dir():
        raise ApplyError(f"working directory does not exist: {cwd}")
    try:
        config = load_config(directory, _repo_root(directory))
    except ConfigError as exc:
        raise ApplyError(str(exc)) from None
    chosen = list(command or config.command or ())
    if not chosen:
        raise ApplyError(
            "no command given: put it after --, or set command in [tool.warp-fix] of pyproject.toml"
        )
    if not dry_run and not branch:
        raise ApplyError("--branch NAME is required (the branch apply creates for its commits)")
    if samples is not None and samples < 1:
        raise ApplyError("--samples must be at least 1")
    if seconds_per_fix is not None and seconds_per_fix <= 0:
        raise ApplyError(f"--time-per-fix must be a positive number of seconds, got {seconds_per_fix:g}")
    if output_tolerance is not None and not 0 <= output_tolerance < 1:
        raise ApplyError(f"--output-tolerance is a relative tolerance in [0, 1), got {output_tolerance:g}")
    return ApplyRequest(
        command=tuple(chosen),
        cwd=directory,
        branch=branch,
        test=test if test is not None else config.test,
        samples=samples or config.samples or DEFAULT_SAMPLES,
        allow=frozenset(allow if allow else config.allow),
        only=frozenset(only or ()),
        protected=config.protected,
        timeout=timeout if timeout is not None else config.timeout,
        dry_run=dry_run,
        allow_nondeterministic_output=allow_nondeterministic_output,
        output_tolerance=output_tolerance,
        seconds_per_fix=seconds_per_fix,
    )


def _repo_root(directory: Path) -> Path | None:
    proc = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=directory, capture_output=True, text=True
    )
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


__all__ = ["ApplyRequest", "ProjectConfig", "build_request"]
