"""Building PromQL from validated names, so no caller-supplied text is ever spliced into a query.

Helper tools (golden signals, utilization, SLO) take names, namespaces and windows; each passes
through here first: names and namespaces through `common/arguments.py` (DNS grammar: nothing a
PromQL string literal could be escaped from), windows through a duration grammar (`30s`, `5m`,
`1h`, `7d`). The raw query tools do not use this module: their PromQL goes to Prometheus as a
form parameter, untouched.
"""

from __future__ import annotations

import re

from core.errors import InvalidArgument
from mcp_servers.common import arguments

_DURATION = re.compile(r"^([1-9][0-9]{0,4})(s|m|h|d|w)$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_WINDOW = 90 * 86400


def window(value: str, *, argument: str = "window") -> str:
    """A PromQL range duration such as `5m`; refused unless it is one number and one unit."""
    matched = _DURATION.match(value)
    if matched is None or seconds(value) > MAX_WINDOW:
        raise InvalidArgument(
            f"{argument} {value!r} is not a duration: write a whole number and one unit "
            "(s, m, h, d, w), e.g. '5m' or '1h', at most 90d"
        )
    return value


def seconds(duration: str) -> int:
    matched = _DURATION.match(duration)
    if matched is None:
        raise InvalidArgument(f"{duration!r} is not a duration such as '5m'")
    return int(matched.group(1)) * _SECONDS[matched.group(2)]


def matchers(*, namespace: str, **names: str) -> str:
    """`namespace="shop",service="web"` from validated values (the label names are ours)."""
    pairs = [("namespace", arguments.namespace(namespace))]
    pairs += [(label, arguments.name(value, argument=label)) for label, value in names.items()]
    return ",".join(f'{label}="{value}"' for label, value in pairs)
