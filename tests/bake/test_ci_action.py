"""The GitHub Action (action.yml) and the GitLab CI template (ci/warp-bake.gitlab-ci.yml), run step by step on
fixtures/suite_project's test suite (pytest -n 2: two workers and an example in a subprocess), as two pipelines:
the first on a fresh runner with nothing cached, the second after a one-file change, on another fresh runner.

Played, not run: actions/cache/restore and actions/cache/save (a folder per key, a restore-keys prefix picks
the newest); GitLab's cache (the folder carried to the next pipeline). Every `run:` step and the template's
script run as written, in bash, with the runner's variables (RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_ENV).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.bake.test_suites import copy_of_suite, edit_helper

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SUITE_COMMAND = "python -m pytest -q -n 2 -p no:cacheprovider tests"


class Runner:
    """A fresh runner: a checkout of the suite, its temp folder, and the variables CI gives a step."""

    def __init__(self, folder: Path, change: bool) -> None:
        self.folder = folder
        self.project = copy_of_suite(folder)
        if change:
            edit_helper(self.project)
        self.temp = folder / "runner-temp"
        self.temp.mkdir()

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        path = str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
        return {**os.environ, "PATH": path, "RUNNER_TEMP": str(self.temp), "CI_PROJECT_DIR": str(self.project), **extra}

    def bash(self, script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=self.project,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, (
            f"{script}\n--- exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done


class GitHubAction:
    """action.yml's composite steps, with actions/cache played by folders kept between pipelines."""

    def __init__(self, saved: Path) -> None:
        self.steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
        self.saved = saved  # actions/cache: one folder per key, in the order saved
        saved.mkdir(exist_ok=True)

    def run(self, runner: Runner, inputs: dict[str, str]) -> str:
        outputs: dict[str, dict[str, str]] = {}
        said = []

        def expand(text: str) -> str:
            def value(match: re.Match) -> str:
                expression = match[1].strip()
                if expression.startswith("inputs."):
                    return inputs.get(expression[len("inputs.") :], "")
                if expression in ("runner.os", "github.sha"):
                    return {"runner.os": "Linux", "github.sha": "0123abc"}[expression]
                step, name = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression).groups()
                return outputs.get(step, {}).get(name, "")

            return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))

        for step in self.steps:
            if "if" in step and not self.holds(step["if"], inputs):
                continue
            uses = step.get("uses", "")
            if uses == "actions/cache/restore@v4":
                self.restore(
                    expand(step["with"]["key"]),
                    expand(step["with"]["restore-keys"]),
                    runner.project / expand(step["with"]["path"]),
                )
            elif uses == "actions/cache/save@v4":
                self.save(expand(step["with"]["key"]), runner.project / expand(step["with"]["path"]))
            else:
                assert not uses, uses
                output = runner.temp / "github-output"
                output.write_text("")
                env = {name: expand(value) for name, value in step.get("env", {}).items()}
                done = runner.bash(
                    step["run"], {**env, "GITHUB_OUTPUT": str(output), "GITHUB_ENV": str(runner.temp / "github-env")}
                )
                said.append(done.stdout + done.stderr)
                outputs[step.get("id", "")] = dict(line.split("=", 1) for line in output.read_text().splitlines())
        return "\n".join(said)

    @staticmethod
    def holds(condition: str, inputs: dict[str, str]) -> bool:
        """The action's conditions: `inputs.NAME == 'VALUE'` and `!=`, joined by `&&`."""
        terms = [re.fullmatch(r"\s*inputs\.([\w-]+)\s*(==|!=)\s*'([^']*)'\s*", term) for term in condition.split("&&")]
        return all((inputs.get(t[1], "") == t[3]) == (t[2] == "==") for t in terms)

    def restore(self, key: str, prefix: str, path: Path) -> None:
        matches = [folder for folder in sorted(self.saved.iterdir()) if folder.name.split("#", 1)[1].startswith(prefix)]
        exact = [folder for folder in matches if folder.name.split("#", 1)[1] == key]
        if exact or matches:
            shutil.copytree((exact or matches)[-1], path)

    def save(self, key: str, path: Path) -> None:
        if not any(folder.name.split("#", 1)[1] == key for folder in self.saved.iterdir()):
            shutil.copytree(path, self.saved / f"{len(list(self.saved.iterdir())):03d}#{key}")


def test_the_github_action_bakes_a_suite_then_rebuilds_only_what_a_change_feeds(tmp_path):
    action = GitHubAction(tmp_path / "actions-cache")
    inputs = {"command": SUITE_COMMAND, "bake": "true", "fail-on-compile": "false", "directory": ".warp-bake"}
    first = action.run(Runner(tmp_path / "first", change=False), inputs)
    assert "no archive yet: this run starts cold" in first
    assert "baked 4 module identities" in first
    (saved,) = (tmp_path / "actions-cache").iterdir()
    second = action.run(Runner(tmp_path / "second", change=True), inputs)
    assert "restored 4 module identities" in second
    assert "bake verify: 2 modules compiled" in second or "bake verify: 3 modules compiled" in second
    assert "in pytest-xdist worker gw" in second
    assert "2 carried over, 2 built, 2 dropped" in second
    assert len(list((tmp_path / "actions-cache").iterdir())) == 2  # a new key: the new archive, saved apart


def test_the_gitlab_template_with_a_store_bakes_a_suite_then_rebuilds_only_what_a_change_feeds(tmp_path):
    job = yaml.safe_load((ROOT / "ci" / "warp-bake.gitlab-ci.yml").read_text())[".warp-bake"]
    store = (tmp_path / "store").as_uri() + "/"
    said = []
    for name, change in (("first", False), ("second", True)):  # two pipelines, each on a fresh runner
        runner = Runner(tmp_path / name, change)
        variables = {**job["variables"], "WARP_BAKE_COMMAND": SUITE_COMMAND, "WARP_BAKE_STORE": store}
        variables["WARP_CACHE_PATH"] = variables["WARP_CACHE_PATH"].replace("$CI_PROJECT_DIR", str(runner.project))
        done = runner.bash("\n".join(job["script"]), variables)
        said.append(done.stdout + done.stderr)
    assert "no archive yet" in said[0] and "baked 4 module identities" in said[0]
    assert "pulled " in said[1] and "restored 4 module identities" in said[1]
    assert "in pytest-xdist worker gw" in said[1]
    assert "2 carried over, 2 built, 2 dropped" in said[1]
