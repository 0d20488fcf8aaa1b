"""Every command block of docs/bake.md and docs/ci.md that runs on a CPU, run as written, twice in a row,
each time in a fresh checkout of an app (the fixture app, as the package `app` the recipes name).

Substituted, and only this: absolute paths of a container or runner (`/app`, `/bake`, `/warp-cache`,
`/tmp/warp`, `$RUNNER_TEMP`) become folders of the run; `s3://team-bucket/warp/` a `file://` folder kept
between the two runs (a store outlives a runner); `<key>` the key `bake key --from-report` gives. Not run:
`pip install` (no network here: this interpreter has both packages), actions that only fetch or upload
(checkout, setup-python, upload-artifact); actions/cache is played: a miss on the first run, the first
run's folder restored on the second. The machine memo (`WARP_FIX_STATE_DIR`) is shared, so only the first
restore starts Warp to read the environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.bake.conftest import MAIN, write_app

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[2] / "docs"
NOT_ON_A_CPU = {  # blocks that are commands but are not run here, and why
    "benchmarks/bake_restore.py --runs": "the benchmark: minutes of interleaved repetitions",
    "benchmarks/bake_restore.py --device cuda": "needs a CUDA GPU",
    "benchmarks/bake_suite.py": "the suite benchmark: minutes of test-suite runs",
    "OWNER/warp-fix": "the suite Action and GitLab template: tests/bake/test_ci_action.py runs their steps on a suite",
}


@dataclass(frozen=True)
class Block:
    doc: str
    language: str  # "sh" for an indented block of commands
    text: str

    @property
    def name(self) -> str:
        first = next(line for line in self.text.splitlines() if line.strip())
        return f"{self.doc}:{self.language}:{first.strip()[:60]}"


def command_blocks(doc: str) -> list[Block]:
    """Fenced blocks (yaml, dockerfile, sh, toml) and indented blocks whose every line is a command."""
    blocks, lines = [], (DOCS / doc).read_text().splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```") and line[3:].strip():
            end = lines.index("```", index + 1)
            blocks.append(Block(doc, line[3:].strip(), "\n".join(lines[index + 1 : end])))
            index = end + 1
            continue
        if line.startswith("    ") and (index == 0 or not lines[index - 1].strip()):
            end = index
            while end < len(lines) and lines[end].startswith("    "):
                end += 1
            text = textwrap.dedent("\n".join(lines[index:end]))
            if all(re.match(r"(warp-fix |git |python3? |env |ssh-keygen |echo )", row) for row in text.splitlines()):
                blocks.append(Block(doc, "sh", text))
            index = end
            continue
        index += 1
    return [b for b in blocks if not any(marker in b.text for marker in NOT_ON_A_CPU)]


BLOCKS = [b for doc in ("bake.md", "ci.md") for b in command_blocks(doc) if b.language != "toml"]


def test_the_docs_have_the_recipes_this_test_runs():
    names = [b.name for b in BLOCKS]
    assert len(names) == 12, names
    assert sum(b.language == "dockerfile" for b in BLOCKS) == 2 and sum(b.language == "yaml" for b in BLOCKS) == 4


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A checkout template: the app, the project's [tool.warp-fix] from ci.md, and its committed baseline."""
    template = tmp_path_factory.mktemp("checkout")
    write_app(template)
    (template / "tinyapp").rename(template / "app")
    (template / "app" / "__main__.py").write_text(textwrap.dedent(MAIN).replace("from tinyapp", "from app"))
    toml = next(b.text for b in command_blocks("ci.md") if b.language == "toml")
    (template / "pyproject.toml").write_text(toml + "\n")
    space = Workspace(template, tmp_path_factory.mktemp("runs"))
    space.shell("warp-fix check --baseline warp-fix.json --update -- python -m app", space.fresh("baseline"))
    shutil.copy(space.runs / "baseline" / "app" / "warp-fix.json", template / "warp-fix.json")
    return space


class Workspace:
    """Fresh checkouts of the template, a store kept between runs, and the environment a runner gives."""

    def __init__(self, template: Path, runs: Path) -> None:
        self.template, self.runs = template, runs
        self.store = runs / "store"
        self.cache_folders: dict[str, Path] = {}  # actions/cache: key -> the saved folder

    def fresh(self, name: str) -> Path:
        run = self.runs / name
        shutil.copytree(self.template, run / "app")
        subprocess.run(["git", "init", "-q"], cwd=run / "app", check=True)
        return run

    def env(self, run: Path) -> dict[str, str]:
        return {
            **os.environ,
            "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
            "WARP_CACHE_PATH": str(run / "runner-cache"),
            "RUNNER_TEMP": str(run / "runner-temp"),
            "CI_PROJECT_DIR": str(run / "app"),
            "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com",
            "GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com",
        }

    def substitute(self, text: str, run: Path) -> str:
        text = text.replace("s3://team-bucket/warp/", self.store.as_uri() + "/")
        for absolute in ("/warp-cache", "/tmp/warp", "/bake", "/app"):
            text = re.sub(rf"(?<![\w./-]){re.escape(absolute)}(?=[/\s\"']|$)", str(run) + absolute, text)
        return text

    def shell(self, script: str, run: Path, env: dict[str, str] | None = None) -> str:
        script = self.substitute(script, run)
        if "<key>" in script:
            script = script.replace("<key>", self.shell("warp-fix bake key --from-report warp-fix.json", run).strip())
        done = subprocess.run(["bash", "-e", "-c", script], cwd=run / "app", env={**self.env(run), **(env or {})},
                              capture_output=True, text=True, timeout=300)
        said = f"{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, f"{script}\n--- exit {done.returncode}\n{said}"
        return done.stdout


def run_github_steps(space: Workspace, steps: list[dict], run: Path) -> None:
    outputs: dict[str, dict[str, str]] = {}
    output_file = run / "github-output"
    saves: list[tuple[str, Path]] = []

    def expand(text: str) -> str:
        def value(match: re.Match) -> str:
            expression = match[1].strip()
            if expression == "runner.os":
                return "Linux"
            step, name = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression).groups()
            return outputs.get(step, {}).get(name, "")

        return re.sub(r"\$\{\{(.*?)\}\}", value, text)

    for step in steps:
        condition = step.get("if")
        if condition is not None and not _holds(expand(re.sub(r"(steps\.[\w.-]+)", r"${{ \1 }}", condition))):
            continue
        uses = step.get("uses", "")
        if uses.startswith("actions/cache@"):
            key, path = expand(step["with"]["key"]), run / "app" / step["with"]["path"]
            hit = key in space.cache_folders
            if hit:
                shutil.copytree(space.cache_folders[key], path)
            else:
                saves.append((key, path))
            outputs[step.get("id", "")] = {"cache-hit": "true" if hit else "false"}
        elif uses:
            assert uses.split("@")[0] in ("actions/checkout", "actions/setup-python", "actions/upload-artifact"), uses
        elif "pip install" not in step["run"]:
            output_file.write_text("")
            space.shell(expand(step["run"]), run, {"GITHUB_OUTPUT": str(output_file)})
            found = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
            outputs[step.get("id", "")] = found
    for key, path in saves:  # actions/cache saves at the end of a job that missed
        space.cache_folders[key] = run.parent / f"saved-{len(space.cache_folders)}"
        shutil.copytree(path, space.cache_folders[key])


def _holds(condition: str) -> bool:
    if condition.strip() == "always()":
        return True
    left, operator, right = re.fullmatch(r"\s*(\S*)\s*(!=|==)\s*'(\w*)'\s*", condition).groups()
    return (left == right) == (operator == "==")


def run_dockerfile(space: Workspace, text: str, run: Path) -> None:
    """RUN lines in the build (pip install left out), then the container started twice."""
    env, entrypoint, command = {}, [], []
    for line in text.splitlines():
        instruction, _, rest = line.partition(" ")
        if instruction == "RUN" and "pip install" not in rest:
            space.shell(rest, run, env)
        elif instruction == "ENV":
            name, value = rest.split("=", 1)
            env[name] = space.substitute(value, run)
        elif instruction == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif instruction == "CMD":
            command = json.loads(rest)
    if entrypoint:
        start = " ".join(f"'{word}'" for word in entrypoint + command)
        for _ in range(2):  # a container's first and second start
            assert space.shell(start, run, env).strip().splitlines()[-1] == "24.0"


def run_block(space: Workspace, block: Block, run: Path) -> None:
    if block.language == "dockerfile":
        run_dockerfile(space, block.text, run)
        return
    if block.language == "sh":
        space.shell(block.text, run)
        return
    data = yaml.safe_load(block.text)
    if isinstance(data, list):  # steps of a GitHub Actions job
        run_github_steps(space, data, run)
    elif "jobs" in data:
        for job in data["jobs"].values():
            run_github_steps(space, job["steps"], run)
    elif "repos" in data:  # pre-commit hooks: entry, then args
        for hook in (h for repo in data["repos"] for h in repo["hooks"]):
            space.shell(" ".join([hook["entry"], *hook["args"]]), run)
    else:  # GitLab CI jobs
        for job in data.values():
            space.shell("\n".join([*job.get("before_script", []), *job.get("script", [])]), run)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_the_recipe_runs_as_written_twice(workspace, block, request):
    slug = re.sub(r"\W+", "-", request.node.callspec.id)[:80]
    workspace.store, workspace.cache_folders = workspace.runs / f"store-{slug}", {}
    for attempt in (1, 2):
        run_block(workspace, block, workspace.fresh(f"{slug}-{attempt}"))
