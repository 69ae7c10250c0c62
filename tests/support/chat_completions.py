"""A local server speaking OpenAI's chat-completions protocol, playing a script of model turns.

    with running_chat_completions([calls(("get_resource", {...})), says("done")]) as server:
        OPENAI_BASE_URL=server.url, OPENAI_API_KEY=server.key; the real provider client talks to it
        server.offered()          # the tool names the client sent on every request
        server.tool_results()     # the `role: "tool"` messages it sent back

It is the network seam of a real chat model (langchain-openai over the `openai` SDK), so the
provider client's own code runs: tool schemas, the request body, tool-call ids and arguments
as JSON strings, tool results as `role: "tool"` messages. Each `POST /v1/chat/completions`
answers with the next turn, shaped as OpenAI's (`id`, `object`, `created`, `model`, `choices`,
`usage`); the scripted model (agents/runtime/scripted.py) stays the fake for tests that need no
wire. Bearer key or 401; a request once the script has run out, or one asking to stream (the
agents invoke the model, they never stream it), is a 400 in OpenAI's error shape, which the
client raises without retrying. Every request is recorded, body and all.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]
Turn = Json  # the `message` of a choice: a tool call or plain text


def calls(*wanted: tuple[str, Json]) -> Turn:
    """A model turn asking for these tool calls, arguments as the JSON string OpenAI sends."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for name, args in wanted
        ],
    }


def says(text: str) -> Turn:
    """A model turn that answers in words."""
    return {"role": "assistant", "content": text}


class ChatCompletions:
    def __init__(self, turns: Sequence[Turn], *, key: str) -> None:
        self.key = key
        self.url = ""  # set once listening: the base URL a client is given, ending in /v1
        self.requests: list[Json] = []  # every request body, in order
        self.paths: list[str] = []  # "POST /v1/chat/completions", for any route the client used
        self._turns = list(turns)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def offered(self) -> list[set[str]]:
        """The names of the tools each request offered the model."""
        return [
            {tool["function"]["name"] for tool in body.get("tools", [])} for body in self.requests
        ]

    def tool_results(self) -> list[Json]:
        """The `role: "tool"` messages of the last request: every result the model was shown."""
        return [m for m in self.requests[-1]["messages"] if m["role"] == "tool"]

    def handle(self, method: str, path: str, authorization: str, raw: bytes) -> tuple[int, Json]:
        with self._lock:
            self.paths.append(f"{method} {path}")
            if authorization != f"Bearer {self.key}":
                return 401, _error("Incorrect API key provided.", "invalid_api_key")
            if (method, path) != ("POST", "/v1/chat/completions"):
                return 404, _error(f"Unknown request URL: {method} {path}.", "unknown_url")
            body: Json = json.loads(raw)
            self.requests.append(body)
            if body.get("stream"):
                refusal = "this server answers whole completions: invoke the model, not stream it"
                return 400, _error(refusal, "stream")
            if not self._turns:
                refusal = f"the script has no turn left for request {len(self.requests)}: add one"
                return 400, _error(refusal, "script")
            return 200, self._completion(body["model"], self._turns.pop(0))

    def _completion(self, model: str, turn: Turn) -> Json:
        number = next(self._ids)
        message = {**turn}
        if "tool_calls" in turn:
            message["tool_calls"] = [
                {"id": f"call_{number}_{index}", **call}
                for index, call in enumerate(turn["tool_calls"])
            ]
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if "tool_calls" in turn else "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }


def _error(message: str, code: str) -> Json:
    kind = "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    chat: ChatCompletions  # set on the subclass made per server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        authorization = self.headers.get("Authorization", "")
        status, body = self.chat.handle(self.command, self.path, authorization, raw)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads `ChatCompletions.requests` instead."""


@contextmanager
def running_chat_completions(
    turns: Sequence[Turn], *, key: str = "sk-test-local"
) -> Iterator[ChatCompletions]:
    """The server on a free loopback port, playing `turns`; stopped on exit."""
    chat = ChatCompletions(turns, key=key)
    handler = type("Handler", (_Handler,), {"chat": chat})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    chat.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="chat-completions",
        daemon=True,
    )
    thread.start()
    try:
        yield chat
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
