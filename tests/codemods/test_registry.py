"""Every codemod declares its typed Args and traits in codemods/specs.py, and they agree with the command."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
import typing

import pytest

from codemods import REGISTRY
from codemods.specs import ARGS_TYPES, CodemodArgs, Effect, places_from_json, places_to_json

TRAITS = ("CODEMOD", "EFFECT", "JOINS_LIST", "ONE_PLACE_PER_CALL")
CODEMODS = sorted(REGISTRY)
#: fields that say where a place is, not what the command does there (by_file turns them into files)
LOCATION_FIELDS = {"file", "sites"}


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


def _kind(annotation: typing.Any) -> str:
    """The CLI kind (`Arg.kind`) a field's type asks for."""
    options = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(options) == 1:
        annotation = options[0]
    if annotation in (str, int):
        return annotation.__name__
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return "strs"
    return "json"


@pytest.mark.parametrize("name", CODEMODS)
def test_args_agree_with_the_commands_arguments(name) -> None:
    """Each field but the location is a command argument: same name, kind, and whether it is required."""
    command, args_type = REGISTRY[name], ARGS_TYPES[name]
    arguments = {a.name: a for a in command.ARGS}
    hints = typing.get_type_hints(args_type)
    for f in dataclasses.fields(args_type):
        if f.name in LOCATION_FIELDS:
            continue
        assert f.name in arguments, f"{name}: field {f.name} is no argument of the command"
        argument = arguments[f.name]
        required = f.default is f.default_factory is dataclasses.MISSING
        assert argument.required == required, f"{name}.{f.name}: required {argument.required} vs {required}"
        if args_type.CODEMOD != "merge_modules":  # its places pair each kernel with its file
            assert argument.kind == _kind(hints[f.name]), f"{name}.{f.name}"


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
