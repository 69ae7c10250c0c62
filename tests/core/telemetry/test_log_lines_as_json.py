"""`--log-format json` (core.telemetry.logs): the lines a long-lived command says become one
JSON object per line on stderr, with the time, the level, the message (its line breaks kept,
escaped) and, when a span is current where it was said, the trace and span ids; in the text
format the command's own printing is used as it is. The option is the `kubecrew` command's
own, before any command, or $KUBECREW_LOG_FORMAT."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from core.telemetry import current_ids, logs, sayer, span, tracing
from kubecrew.cli.main import app
from tests.support.otlp import receiving


@pytest.fixture
def json_lines() -> Iterator[None]:
    logs.configure("json")
    yield
    logs.configure("text")


def test_a_said_line_is_a_json_record_with_its_trace(
    json_lines: None, capsys: pytest.CaptureFixture[str]
) -> None:
    said: list[str] = []
    say = sayer(said.append, name="watch")
    with receiving() as collector:
        traced = tracing.configure("watch", {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url})
        assert traced is not None
        try:
            say("watching shop")
            with span("handle_incident"):
                ids = current_ids()
                say("handled ImagePullBackOff on Deployment web in shop:\nthe image is wrong")
        finally:
            traced.shutdown()

    assert said == []  # not printed as text
    first, second = (json.loads(line) for line in capsys.readouterr().err.splitlines())
    assert first["message"] == "watching shop" and "trace_id" not in first
    assert first["level"] == "info" and first["logger"] == "kubecrew.watch"
    assert first["time"].endswith("Z") and first["time"][:2] == "20"
    assert second["message"].endswith("Deployment web in shop:\nthe image is wrong")
    assert ids is not None and (second["trace_id"], second["span_id"]) == ids


def test_in_the_text_format_a_command_prints_as_it_always_did() -> None:
    said: list[str] = []
    assert sayer(said.append, name="watch") == said.append


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_format_is_a_global_option_of_kubecrew(how: str) -> None:
    args, env = (
        (["--log-format", "json"], {}) if how == "option" else ([], {logs.FORMAT_ENV: "json"})
    )
    try:
        done = CliRunner().invoke(app, [*args, "version"], env=env)
        assert done.exit_code == 0, done.output
        assert logs.current() is logs.LogFormat.json
    finally:
        logs.configure("text")
    wrong = CliRunner().invoke(app, ["--log-format", "xml", "version"])
    assert wrong.exit_code == 2 and "xml" in wrong.output
    assert logs.current() is logs.LogFormat.text
