"""The applications public images run, as `catalog/apps.yaml` describes them: read and checked.

An image of the catalog (`catalog/images.yaml`) names the profile its containers run; for the
applications people pull from public registries (mongo, prometheus, grafana, vault...) that
profile is an `App` of `apps.yaml`: the ports it really listens on, the HTTP paths that answer
200, how long it takes to listen, its memory, its first log lines and the env its image refuses
to start without. Everything else about it (traffic, CPU, latency, what it logs while running)
comes from the built-in profile it names as `base`; `sandbox.kubelet.profiles` makes the
`Profile` from the two.

This module only reads and validates the data, and knows no `Profile`: the names a `base` may
take are handed in, so profiles can build on it without an import cycle. A mistake in the data
fails at load with a `ValueError` naming the app and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from sandbox.kubelet import catalog

__all__ = ["DATA", "App", "load", "parse"]

DATA = "apps.yaml"
_REQUIRED = ("base", "ports", "paths")
_OPTIONAL = ("startup", "memory_mib", "logs", "error_logs", "required_env")
_MAX_PORT = 65535
_Fail = Callable[[str, str], ValueError]  # (field, problem) -> the error naming the app


@dataclass(frozen=True)
class App:
    name: str  # the profile name images.yaml gives its repositories
    base: str  # the built-in profile whose other behaviour it keeps
    ports: tuple[int, ...]
    paths: tuple[str, ...]  # HTTP paths answering 200
    startup: float | None  # seconds to listening; None: the base's
    memory_mib: float | None  # None: the base's
    logs: tuple[str, ...]  # printed at start
    error_logs: tuple[str, ...]  # printed before it exits for want of `required_env`
    required_env: tuple[str, ...]


def load(*, bases: Collection[str]) -> tuple[App, ...]:
    """The shipped apps, each based on one of `bases` (the built-in profiles' names)."""
    text = resources.files(catalog).joinpath(DATA).read_text(encoding="utf-8")
    return parse(text, bases=bases)


def parse(text: str, *, bases: Collection[str]) -> tuple[App, ...]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw: Any = yaml.load(text, Loader=loader)  # a safe loader: C when built
    if not isinstance(raw, dict) or not isinstance(raw.get("apps"), dict):
        raise ValueError(f"{DATA} must map `apps` to application entries")
    return tuple(_app(str(name), entry, bases) for name, entry in raw["apps"].items())


def _app(name: str, entry: Any, bases: Collection[str]) -> App:
    def fail(field: str, problem: str) -> ValueError:
        return ValueError(f"{DATA}: app {name}: {field}: {problem}")

    if not isinstance(entry, Mapping):
        raise fail("entry", f"must map fields to values, not {entry!r}")
    if name in bases:
        raise fail("name", f"{name!r} is a built-in profile's; give the app another name")
    for key in entry:
        if key not in (*_REQUIRED, *_OPTIONAL):
            raise fail(str(key), f"unknown field; known: {', '.join((*_REQUIRED, *_OPTIONAL))}")
    for key in _REQUIRED:
        if key not in entry:
            raise fail(key, "is required")
    base = entry["base"]
    if base not in bases:
        raise fail("base", f"no built-in profile named {base!r}; known: {', '.join(sorted(bases))}")
    return App(
        name=name,
        base=str(base),
        ports=_ports(entry, fail),
        paths=_paths(entry, fail),
        startup=_number(entry, "startup", fail),
        memory_mib=_number(entry, "memory_mib", fail),
        logs=_strings(entry, "logs", fail),
        error_logs=_strings(entry, "error_logs", fail),
        required_env=_strings(entry, "required_env", fail),
    )


def _list(entry: Mapping[str, Any], key: str, fail: _Fail) -> list[Any]:
    value = entry.get(key, [])
    if not isinstance(value, list):
        raise fail(key, f"must be a list, not {value!r}")
    return value


def _ports(entry: Mapping[str, Any], fail: _Fail) -> tuple[int, ...]:
    ports = _list(entry, "ports", fail)
    for port in ports:
        # bool is an int to Python, never a port to anyone
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= _MAX_PORT:
            raise fail("ports", f"{port!r} is not a port (an int from 1 to {_MAX_PORT})")
    return tuple(ports)


def _paths(entry: Mapping[str, Any], fail: _Fail) -> tuple[str, ...]:
    paths = _strings(entry, "paths", fail)
    for path in paths:
        if not path.startswith("/"):
            raise fail("paths", f"{path!r} is not an HTTP path (it starts with /)")
    return paths


def _strings(entry: Mapping[str, Any], key: str, fail: _Fail) -> tuple[str, ...]:
    items = _list(entry, key, fail)
    for item in items:
        if not isinstance(item, str) or not item:
            raise fail(key, f"{item!r} is not a non-empty string")
    return tuple(items)


def _number(entry: Mapping[str, Any], key: str, fail: _Fail) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise fail(key, f"{value!r} is not a number of at least 0")
    return float(value)
