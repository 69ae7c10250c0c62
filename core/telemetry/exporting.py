"""Sending spans without ever troubling the crew: the OTLP/HTTP exporter, its failures counted
(`kubecrew_trace_export_failures_total`) and said once on the `kubecrew.telemetry` logger, and
the SDK's own log lines kept instead of printed (the last one is quoted in that warning).

Imported only when tracing is configured (`tracing.configure`): it brings the SDK.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from core.telemetry import metrics

log = logging.getLogger("kubecrew.telemetry")


class QuietExporter(SpanExporter):
    """`inner`, with failures counted and said once (again only after a success) rather than
    logged each time; `down` while the last export failed."""

    def __init__(self, inner: SpanExporter, endpoint: str) -> None:
        self._inner = inner
        self.endpoint = endpoint
        self.down = False
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._closed:
            return SpanExportResult.FAILURE
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # an exporter bug must not end the SDK's thread
            KEPT.last = f"{type(exc).__name__}: {exc}"
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            if self.down:
                log.info("telemetry: spans reach %s again", self.endpoint)
            self.down = False
            return result
        metrics.trace_export_failed()
        if not self.down:
            self.down = True
            why = f" ({KEPT.last})" if KEPT.last else ""
            log.warning(
                "telemetry: spans could not be sent to %s%s; the crew carries on without them "
                "(kubecrew_trace_export_failures_total counts the batches lost)",
                self.endpoint,
                why,
            )
        return result

    def shutdown(self) -> None:
        """Stop: later exports fail at once, and a retry under way is abandoned."""
        if not self._closed:
            self._closed = True
            self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class _Kept(logging.Handler):
    """Keeps the SDK's last warning (a failed export's reason) instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.last = " ".join(record.getMessage().split())[:300]


KEPT = _Kept()


def keep_sdk_logs() -> None:
    sdk = logging.getLogger("opentelemetry")
    if KEPT not in sdk.handlers:
        sdk.addHandler(KEPT)
    sdk.propagate = False
