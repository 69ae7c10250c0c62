"""The MCP HTTP transport refuses a bearer token too weak to guess-proof it (under 32 random
bytes), from a `--token-file` or `$KUBECREW_MCP_TOKEN`, before it serves anything; the tokens it
generates itself, and the ones its error message says how to make, are accepted."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_servers.common import transport
from mcp_servers.common.transport import TOKEN_ENV, TransportError, TransportOptions, check

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
HOW = "secrets.token_urlsafe(32)"
WEAK = {
    "one-character": "x",
    "a-word": "hunter2",
    "27-characters": "test-token-0123456789abcdef",
    "42-url-safe": secrets.token_urlsafe(32)[:42],
    "hex-of-16-bytes": secrets.token_hex(16),
    "43-of-one-letter": "a" * 43,
    "digits-only": "0123456789" * 5,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("token", list(WEAK.values()), ids=list(WEAK))
def test_a_weak_token_file_is_refused_before_serving(token: str, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(token + "\n")
    with pytest.raises(TransportError, match="too weak") as refused:
        check(TransportOptions(transport="http", token_file=path))
    assert HOW in str(refused.value)
    assert token not in str(refused.value)  # the message never repeats the token


@pytest.mark.parametrize(
    "make",
    [lambda: secrets.token_urlsafe(32), lambda: secrets.token_hex(32),
     lambda: secrets.token_urlsafe(48)],
    ids=["token_urlsafe-32", "token_hex-32", "token_urlsafe-48"],
)  # fmt: skip
def test_tokens_of_32_random_bytes_are_accepted(make: object, tmp_path: Path) -> None:
    path = tmp_path / "token"
    for _ in range(200):  # random tokens: no unlucky draw may be refused
        token = make()  # type: ignore[operator]
        assert transport.strong_token(token) == token
        path.write_text(token + "\n")
        check(TransportOptions(transport="http", token_file=path))


def test_the_cli_refuses_a_one_character_token_file_in_one_line(
    manifests: Path, tmp_path: Path
) -> None:
    path = tmp_path / "token"
    path.write_text("x\n")
    done = subprocess.run(
        [KUBECREW, "mcp", "gitops", "--repo", str(manifests), "--transport", "http",
         "--port", str(_free_port()), "--token-file", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "too weak" in done.stderr and HOW in done.stderr
    assert "Traceback" not in done.stderr


def test_a_weak_token_in_the_environment_is_refused_before_serving(manifests: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    command = [sys.executable, "-m", "mcp_servers.gitops", "--repo", str(manifests)]
    command += ["--transport", "http", "--port", str(_free_port())]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
            env={**environ, TOKEN_ENV: "x", "KUBECREW_HOME": str(manifests.parent / "home")},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the server started serving with a one-character token")
    assert done.returncode != 0
    assert "too weak" in done.stderr and HOW in done.stderr


def test_a_generated_token_is_accepted_and_stays_private(tmp_path: Path) -> None:
    environ = {"KUBECREW_HOME": str(tmp_path / "home")}
    options = TransportOptions(transport="http")
    token = transport.bearer_token(options, name="gitops", environ=environ)
    assert transport.strong_token(token) == token
    written = tmp_path / "home" / "mcp" / "gitops.token"
    assert written.read_text().strip() == token


def test_the_watchers_webhook_refuses_a_weak_token_file(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("hunter2\n")
    done = subprocess.run(
        [KUBECREW, "watch", "--alertmanager-port", str(_free_port()), "--token-file", str(path)],
        capture_output=True, text=True, timeout=30, check=False,
        env=os.environ | {"KUBECREW_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert done.returncode != 0
    assert "too weak" in done.stderr + done.stdout and HOW in done.stderr + done.stdout
    assert "hunter2" not in done.stderr + done.stdout and "Traceback" not in done.stderr
