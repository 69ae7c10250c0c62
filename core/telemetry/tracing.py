"""Traces: OpenTelemetry spans exported over OTLP/HTTP, on only when a collector is named.

`configure(command)` reads the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (the
collector's base URL; spans go to `<it>/v1/traces`) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
(the full URL). Neither set, or `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`: no
provider is built, the SDK is not even imported, and `span` costs a function call. The rest of
the standard variables (headers, timeout, sampler, resource attributes, `OTEL_SERVICE_NAME`)
keep their meaning. The resource says `service.name=kubecrew` (unless the variables name
another) and `kubecrew.command` (`watch`, `heal`, ...); spans say which agent acted.

Spans are batched and sent from a thread of the SDK's (`BatchSpanProcessor`): the crew's work
never waits for a collector. One that is down, refuses or times out costs a warning line on
the `kubecrew.telemetry` logger the first time (again only after spans got through meanwhile),
a count in `kubecrew_trace_export_failures_total` each time, and nothing else: the SDK's own
log lines are kept, not printed, the last one quoted in that warning. At exit at most
`SHUTDOWN_BUDGET_S` is spent sending what is left (none when the collector is known down).

The provider is this module's, not OpenTelemetry's global one, which can be set only once per
process: `Tracing.shutdown` puts the no-op back, so a test can trace one scenario and stop.
Spans still nest through OpenTelemetry's context, so a log record or a span started anywhere
in the crew sees the current one (`current_ids`).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind
from opentelemetry.util.types import AttributeValue

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from core.telemetry.exporting import QuietExporter

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
SERVICE = "kubecrew"
SCOPE = "kubecrew"
SHUTDOWN_BUDGET_S = 2.0

Attributes = Mapping[str, AttributeValue]


class Tracing:
    """A configured tracer provider, exporting to `endpoint` until `shutdown`."""

    def __init__(self, provider: TracerProvider, exporter: QuietExporter) -> None:
        self.provider = provider
        self.exporter = exporter
        self.tracer = provider.get_tracer(SCOPE)

    @property
    def endpoint(self) -> str:
        return self.exporter.endpoint

    def flush(self) -> None:
        """Send the spans ended so far (blocks while the collector answers)."""
        self.provider.force_flush()

    def shutdown(self, *, budget: float = SHUTDOWN_BUDGET_S) -> None:
        """Stop tracing: what is left is sent within `budget` seconds, or dropped."""
        global _active
        atexit.unregister(self.shutdown)
        if _active is self:
            from core.telemetry import graphs

            _active = None
            graphs.follow(None)
        if self.exporter.down:
            self.exporter.shutdown()  # nothing will get through: do not wait on retries
        ending = threading.Thread(target=self.provider.shutdown, name="otel-shutdown", daemon=True)
        ending.start()
        ending.join(budget)
        if ending.is_alive():
            self.exporter.shutdown()


_active: Tracing | None = None  # the tracing `configure` set up, until its shutdown


def configure(
    command: str | None = None, environ: Mapping[str, str] = os.environ
) -> Tracing | None:
    """Trace this process when the environment names a collector (see the module docstring);
    None when it does not. Configuring again replaces the tracing configured before."""
    global _active
    endpoint = _endpoint(environ)
    if endpoint is None:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from core.telemetry import graphs
    from core.telemetry.exporting import QuietExporter, keep_sdk_logs

    attributes: dict[str, AttributeValue] = {"kubecrew.command": command or ""}
    named = "OTEL_SERVICE_NAME" in environ or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = SERVICE
    # shutdown_on_exit=False: the SDK's own exit hook may wait 30 s on a collector that is down
    provider = TracerProvider(resource=Resource.create(attributes), shutdown_on_exit=False)
    otlp = OTLPSpanExporter(endpoint=endpoint, timeout=_timeout(environ))
    exporter = QuietExporter(otlp, endpoint)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    keep_sdk_logs()
    if _active is not None:
        _active.shutdown()
    _active = Tracing(provider, exporter)
    graphs.follow(_active.tracer)
    atexit.register(_active.shutdown)
    return _active


def _endpoint(environ: Mapping[str, str]) -> str | None:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    full = environ.get(TRACES_ENDPOINT_ENV, "").strip()
    if full:
        return full
    base = environ.get(ENDPOINT_ENV, "").strip()
    return f"{base.rstrip('/')}/v1/traces" if base else None


def _timeout(environ: Mapping[str, str]) -> float | None:
    """The export timeout in seconds, as the Python exporter reads its variables (None: its
    default, 10 s)."""
    raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or environ.get(
        "OTEL_EXPORTER_OTLP_TIMEOUT"
    )
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


@contextmanager
def span(
    name: str, attributes: Attributes | None = None, *, kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[Span]:
    """A span, current for the block; the invalid (no-op) span when tracing is off. An
    exception leaving the block is recorded on it with `error.type`, and passes on."""
    tracing = _active
    if tracing is None:
        yield INVALID_SPAN
        return
    with tracing.tracer.start_as_current_span(
        name, kind=kind, attributes=attributes, record_exception=False
    ) as current:
        try:
            yield current
        except BaseException as exc:
            failed(current, type(exc).__qualname__, str(exc))
            raise


def failed(current: Span, error_type: str, description: str = "") -> None:
    """Mark `current` failed, the OpenTelemetry way (`error.type` and an ERROR status)."""
    if current.is_recording():
        current.set_attribute("error.type", error_type)
        current.set_status(trace.Status(trace.StatusCode.ERROR, description[:500] or None))


def annotate(attributes: Attributes) -> None:
    """Add `attributes` to the current span (a graph node's: the fix it tries, the outcome)."""
    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes(attributes)


def current_ids() -> tuple[str, str] | None:
    """The current span's trace id and span id in hex, or None when no span is current."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
