"""The API server's own metrics the sandbox keeps: `apiserver_requested_deprecated_apis`.

kube-apiserver sets this gauge to 1 for each deprecated group/version/resource/subresource a
request reached since it started; its name, HELP text and labels (sorted by name in the text, as
the Prometheus Go client writes them) are k8s.io/apiserver's endpoints/metrics. The family is
absent until a first deprecated request, as a Go gauge vector without children is.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandbox.deprecations import DeprecatedRequest
from sandbox.exposition.text import Exposition, labels

DEPRECATED_APIS = "apiserver_requested_deprecated_apis"
DEPRECATED_APIS_HELP = (
    "Gauge of deprecated APIs that have been requested, broken out by API group, version, "
    "resource, subresource, and removed_release."
)


def render_apiserver(out: Exposition, requested: Iterable[DeprecatedRequest]) -> None:
    family = None
    for request in requested:
        family = family or out.gauge(DEPRECATED_APIS, DEPRECATED_APIS_HELP)
        series = labels(
            ("group", request.group),
            ("removed_release", request.removed_release),
            ("resource", request.resource),
            ("subresource", request.subresource),
            ("version", request.version),
        )
        family.add(series, 1)
