"""Rebuild nested dataclasses from `dataclasses.asdict` output, so `from_json` needs no per-class code.

Each class's fields are read once into a plan of converters: a kept index rebuilds hundreds of thousands of
values per plan, and asking `typing` about every one of them was most of the time a warm plan took.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
Converter = Callable[[Any], Any]


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build `cls` from a dict, recursing into dataclass, list, dict and optional fields."""
    kwargs = {name: convert(data[name]) for name, convert in _fields_of(cls) if name in data}
    return cls(**kwargs)


@functools.cache
def _fields_of(cls: type) -> tuple[tuple[str, Converter], ...]:
    """(name, converter) of each field `__init__` takes, worked out once per class."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _converter(hints[f.name])) for f in dataclasses.fields(cls) if f.init)


def _keep(value: Any) -> Any:
    return value


def _converter(hint: Any) -> Converter:
    """How a value of type `hint` comes back from JSON: as it is, unless a dataclass is somewhere inside."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _optional(_converter(options[0])) if len(options) == 1 else _keep
    if origin is list:
        (item,) = typing.get_args(hint)
        inner = _converter(item)
        return _keep if inner is _keep else _list_of(inner)
    if dataclasses.is_dataclass(hint):
        return _dataclass(hint)  # type: ignore[arg-type]
    return _keep


def _optional(inner: Converter) -> Converter:
    if inner is _keep:
        return _keep
    return lambda value: None if value is None else inner(value)


def _list_of(inner: Converter) -> Converter:
    return lambda value: None if value is None else [inner(v) for v in value]


def _dataclass(cls: type) -> Converter:
    return lambda value: from_dict(cls, value) if isinstance(value, dict) else value
