"""measure reports its progress as typed events: the CLI's bar and lines read fields, never text."""

from __future__ import annotations

import sys

import pytest
from rich.console import Console

from warp_fix.cli import _sample_bar
from warp_fix.probe import BaselineFailed, SampleStarted, measure


def test_each_sample_is_announced_before_it_runs(tmp_path):
    events: list[SampleStarted] = []
    with pytest.raises(BaselineFailed):  # the command fails at once: the first sample is the last
        measure(
            [sys.executable, "-c", "raise SystemExit(3)"], tmp_path, samples=2, label="base", progress=events.append
        )
    assert events == [SampleStarted("base", 1, 2)]
    assert events[0].line() == "sample 1/2"


def test_the_bar_counts_the_samples_already_done():
    bar, advance = _sample_bar(Console(file=None, quiet=True), samples=3)
    advance(SampleStarted(None, 3, 3))
    (task,) = bar.tasks
    assert (task.completed, task.total) == (2, 3)
