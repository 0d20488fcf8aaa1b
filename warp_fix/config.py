"""`[tool.warp-fix]` in the target's pyproject.toml: defaults for apply, validated with the key named.

Command-line flags override every key. See docs/configuration.md.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

TABLE = "[tool.warp-fix]"
KEYS = ("command", "test", "samples", "allow", "protected", "timeout")


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key. Exit 2."""


@dataclass(frozen=True)
class ProjectConfig:
    command: tuple[str, ...] | None = None
    test: str | None = None
    samples: int | None = None
    allow: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    timeout: float | None = None
    source: Path | None = None  # the pyproject.toml it came from


def find_pyproject(start: Path, stop: Path | None = None) -> Path | None:
    """The nearest pyproject.toml from `start` upwards, not above `stop` (the repository root)."""
    start = Path(start).resolve()
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if stop is not None and directory == Path(stop).resolve():
            break
    return None


def load_config(start: Path, stop: Path | None = None) -> ProjectConfig:
    path = find_pyproject(start, stop)
    if path is None:
        return ProjectConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    table = data.get("tool", {}).get("warp-fix")
    if table is None:
        return ProjectConfig(source=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{TABLE} in {path} must be a table")
    return parse_config(table, path)


def parse_config(table: dict[str, Any], source: Path | None = None) -> ProjectConfig:
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{TABLE} unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    return ProjectConfig(
        command=_command(table.get("command")),
        test=_string(table, "test"),
        samples=_positive_int(table, "samples"),
        allow=_strings(table, "allow"),
        protected=_strings(table, "protected"),
        timeout=_positive_number(table, "timeout"),
        source=source,
    )


def _command(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise ConfigError(f"{TABLE} command cannot be split into arguments: {exc}") from exc
    elif isinstance(value, list) and all(isinstance(x, str) for x in value):
        parts = list(value)
    else:
        raise ConfigError(f"{TABLE} command must be a string or a list of strings")
    if not parts:
        raise ConfigError(f"{TABLE} command must not be empty")
    return tuple(parts)


def _string(table: dict, key: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{TABLE} {key} must be a non-empty string")
    return value


def _positive_int(table: dict, key: str) -> int | None:
    value = table.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{TABLE} {key} must be an integer >= 1")
    return value


def _positive_number(table: dict, key: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{TABLE} {key} must be a number of seconds > 0")
    return float(value)


def _strings(table: dict, key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(x, str) and x.strip() for x in value):
        raise ConfigError(f"{TABLE} {key} must be a list of non-empty strings")
    return tuple(value)
