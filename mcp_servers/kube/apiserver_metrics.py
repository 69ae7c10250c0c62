"""The API server's own metrics, one family at a time: what `kubectl get --raw /metrics | grep NAME`
shows a person, parsed.

kube-apiserver serves its metrics in the Prometheus text format at the non-resource path
`/metrics` (RBAC: `get` on nonResourceURLs `/metrics`). Some answer questions no object does:
`apiserver_requested_deprecated_apis` says which deprecated API versions were requested since the
API server started, whoever asked. `family` reads the text once and keeps only the samples of the
one metric asked for (a histogram's `_bucket`, `_sum` and `_count` series with it), each with its
labels, so a caller never wades through the thousands of other lines, and needs no Prometheus.
Reads only; the name is checked against the format's grammar before any request.
"""

from __future__ import annotations

import re

from core.connection import Api, Json
from core.errors import InvalidArgument
from mcp_servers.common import bounds

PATH = "/metrics"
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_SERIES = ("", "_bucket", "_sum", "_count")


def family(api: Api, name: str, *, limit: int = bounds.DEFAULT_LIMIT, offset: int = 0) -> Json:
    """`name`'s help, type and samples from the API server's /metrics; `found` is False when
    it exposes none (a labelled metric has no series until its first one is set)."""
    if not _NAME.match(name):
        raise InvalidArgument(
            f"name {name!r} is not a metric name (letters, digits, '_' and ':', not starting "
            "with a digit), e.g. apiserver_requested_deprecated_apis"
        )
    text = api.text(PATH, what="the API server's /metrics")
    help_text, kind, samples = "", "", []
    for line in text.splitlines():
        if line.startswith(f"# HELP {name} "):
            help_text = _unescaped(line[len(f"# HELP {name} ") :])
        elif line.startswith(f"# TYPE {name} "):
            kind = line[len(f"# TYPE {name} ") :].strip()
        elif line and not line.startswith("#"):
            sample = _sample(line, name)
            if sample is not None:
                samples.append(sample)
    shown = bounds.page(samples, limit=limit, offset=offset, what="samples")
    answer: Json = {
        "metric": name,
        "found": bool(samples),
        "type": kind,
        "help": help_text,
        "samples": shown.items,
        "total": shown.total,
    }
    if shown.note:
        answer["note"] = shown.note
    return answer


def _sample(line: str, name: str) -> Json | None:
    found = _SAMPLE.match(line)
    if found is None:
        return None
    series, labels, value = found.groups()
    suffix = series.removeprefix(name)
    if not series.startswith(name) or suffix not in _SERIES:
        return None
    sample: Json = {
        "labels": {key: _unescaped(raw) for key, raw in _LABEL.findall(labels or "")},
        "value": float(value),
    }
    if suffix:
        sample["series"] = series
    return sample


def _unescaped(text: str) -> str:
    return re.sub(r'\\[\\"n]', lambda m: _UNESCAPE[m.group()], text)
