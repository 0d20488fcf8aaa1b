"""Every codemod declares its typed Args and traits in codemods/specs.py, and they agree with the command."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys

import pytest

from codemods import REGISTRY
from codemods.specs import (
    ARGS_TYPES,
    LOCATION_FIELDS,
    Arg,
    CodemodArgs,
    Effect,
    Options,
    OptionValue,
    argument,
    places_from_json,
    places_to_json,
)

TRAITS = ("CODEMOD", "EFFECT", "JOINS_LIST", "ONE_PLACE_PER_CALL")
CODEMODS = sorted(REGISTRY)


def test_every_codemod_has_args_and_every_args_a_codemod() -> None:
    assert set(ARGS_TYPES) == set(REGISTRY)
    for name, command in REGISTRY.items():
        assert command.ARGS_TYPE is ARGS_TYPES[name], name
        assert command.ARGS_TYPE.CODEMOD == command.NAME == name


@pytest.mark.parametrize("name", CODEMODS)
def test_args_are_a_frozen_dataclass_named_for_the_codemod_with_every_trait(name) -> None:
    args_type = ARGS_TYPES[name]
    assert args_type.__name__ == REGISTRY[name].__name__ + "Args"
    assert dataclasses.is_dataclass(args_type) and args_type.__dataclass_params__.frozen
    assert issubclass(args_type, CodemodArgs)
    missing = [trait for trait in TRAITS if not hasattr(args_type, trait)]
    assert not missing, f"{name} does not declare {missing}"
    assert isinstance(args_type.EFFECT, Effect)
    if args_type.JOINS_LIST is not None:
        assert args_type.JOINS_LIST in {f.name for f in dataclasses.fields(args_type)}
    if args_type.ONE_PLACE_PER_CALL:  # a joined fix's title names each place
        assert args_type.where is not CodemodArgs.where


@pytest.mark.parametrize("name", CODEMODS)
def test_every_field_says_what_it_means_and_every_other_is_a_command_argument(name) -> None:
    """The Args is the one declaration: the command's arguments are its fields but the location, then the
    arguments only the command takes; each in the docstring's `args:` list."""
    command, args_type = REGISTRY[name], ARGS_TYPES[name]
    for f in dataclasses.fields(args_type):
        assert f.metadata.get("help"), f"{name}.{f.name} has no help: declare it with specs.argument(help)"
    arguments = [f.name for f in dataclasses.fields(args_type) if f.name not in LOCATION_FIELDS]
    assert [a.name for a in command.ARGS] == arguments + [a.name for a in args_type.COMMAND_ONLY]
    assert command.__doc__.endswith(args_type.describe())
    for f in dataclasses.fields(args_type):
        assert f"\n  {f.name} (" in command.__doc__, f.name


@dataclasses.dataclass(frozen=True, kw_only=True)
class _SampleArgs(CodemodArgs):
    file: str = argument("the file.")
    names: list[str] = argument("names.")
    line: int | None = argument("a line.", default=None)
    value: OptionValue = argument("a value.")
    options: Options = argument("options.", default_factory=dict)
    kernels: list[tuple[str, str]] = argument("pairs, names on the command line.", cli_kind="strs")


def test_command_arguments_take_their_kind_requirement_and_default_from_the_fields() -> None:
    assert _SampleArgs.command_args() == (
        Arg("names", "strs", "names.", required=True),
        Arg("line", "int", "a line."),
        Arg("value", "json", "a value.", required=True),
        Arg("options", "json", "options.", default={}),
        Arg("kernels", "strs", "pairs, names on the command line.", required=True),
    )
    assert _SampleArgs.describe().splitlines() == [
        "args:",
        "  file (str): the file.",
        "  names (list[str]): names.",
        "  line (int, optional): a line.",
        "  value (JSON value): a value.",
        "  options (dict, default {}): options.",
        "  kernels (list[tuple[str, str]]): pairs, names on the command line.",
    ]


def test_the_cli_parses_each_kind_of_argument() -> None:
    """What `python -m libcst.tool codemod` does with the derived ARGS: several values, an int, JSON."""
    parser = argparse.ArgumentParser()
    REGISTRY["preload"].add_args(parser)
    parsed = parser.parse_args(["--modules", "sim", "render", "--device", "cuda:0", "--max_workers", "2",
                                "--block_dims", '{"sim": 128}'])  # fmt: skip
    assert (parsed.modules, parsed.device, parsed.max_workers, parsed.block_dims) == (
        ["sim", "render"], "cuda:0", 2, {"sim": 128}
    )
    assert parsed.function is None and parsed.before_line is None


@pytest.mark.parametrize("name", CODEMODS)
def test_each_example_is_json_of_its_args_and_gives_the_commands_arguments(name) -> None:
    command = REGISTRY[name]
    arguments = {a.name for a in command.ARGS}
    required = {a.name for a in command.ARGS if a.required}
    for example in command.EXAMPLES:
        places = places_from_json(name, example.args)
        assert places_from_json(name, places_to_json(places)) == places
        for kwargs in (kwargs for place in places for kwargs in place.by_file().values()):
            assert required <= set(kwargs) <= arguments, (example.title, kwargs)


def test_the_joined_places_are_the_each_json() -> None:
    places = places_from_json("kernels_to_module_scope", {"each": [
        {"file": "sim.py", "factory": "make_a", "kernels": ["a"]},
        {"file": "sim.py", "factory": "make_b", "kernels": ["b"], "module": "sim"},
    ]})  # fmt: skip
    assert [place.where() for place in places] == ["make_a()", "make_b()"]
    assert places_to_json(places)["each"][1]["module"] == "sim"


def test_keep_cache_writes_one_files_lines_or_the_sites_of_several() -> None:
    one = {"file": "app.py", "lines": [3, 9], "protected_functions": []}
    several = {"sites": [{"file": "a.py", "line": 3}, {"file": "b.py", "line": 4}], "protected_functions": ["rebuild"]}
    for data in (one, several):
        (place,) = places_from_json("keep_cache", data)
        assert place.to_json() == data
    (place,) = places_from_json("keep_cache", several)
    assert place.by_file() == {
        "a.py": {"lines": [3], "protected_functions": ["rebuild"], "helpers": []},
        "b.py": {"lines": [4], "protected_functions": ["rebuild"], "helpers": []},
    }


def test_the_specs_import_no_libcst_and_nothing_else_of_codemods() -> None:
    code = "import sys, codemods.specs; print(sorted(m for m in sys.modules if m.startswith(('libcst', 'codemods'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['codemods', 'codemods.specs']"
