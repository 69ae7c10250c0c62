"""A minimal HTTP/1.1 keep-alive client for load generation.

General-purpose clients (httpx, the Kubernetes client) spend more CPU per request than the sandbox
does serving it, so on a 2-core machine they measure themselves. This one writes prepared request
bytes and reads responses by Content-Length or chunked framing on persistent TLS connections.
Benchmarks only: no redirects, no retries, no proxy, no compression.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass
class Response:
    status: int
    body: bytes


class Connection:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, token: str
    ) -> None:
        self._reader, self._writer = reader, writer
        self._host, self._token = host, token

    @classmethod
    async def open(cls, url: str, *, token: str, ca: Path) -> Connection:
        parts = urlsplit(url)
        context = ssl.create_default_context(cafile=str(ca)) if parts.scheme == "https" else None
        reader, writer = await asyncio.open_connection(
            parts.hostname, parts.port, ssl=context, limit=64 * 1024 * 1024
        )
        return cls(reader, writer, parts.netloc, token)

    async def request(
        self, method: str, path: str, body: bytes = b"", *, accept: str = "application/json"
    ) -> Response:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self._host}\r\n"
            f"Authorization: Bearer {self._token}\r\nAccept: {accept}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self._writer.write(head.encode() + body)
        return await self._read_response()

    async def _read_response(self) -> Response:
        status_line = await self._reader.readline()
        status = int(status_line.split(b" ", 2)[1])
        length, chunked = 0, False
        while True:
            line = await self._reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            return Response(status, await self._reader.readexactly(length))
        chunks = []
        while True:
            size = int((await self._reader.readline()).strip(), 16)
            chunk = await self._reader.readexactly(size + 2)
            if size == 0:
                return Response(status, b"".join(chunks))
            chunks.append(chunk[:-2])

    async def lines(self, path: str) -> AsyncIterator[bytes]:
        """Stream a chunked response line by line (for watches)."""
        head = (
            f"GET {path} HTTP/1.1\r\nHost: {self._host}\r\n"
            f"Authorization: Bearer {self._token}\r\nAccept: application/json\r\n\r\n"
        )
        self._writer.write(head.encode())
        await self._reader.readline()
        header = b"status line read"
        while header not in (b"\r\n", b""):  # skip the headers: the body is chunked
            header = await self._reader.readline()
        buffer = b""
        while True:
            size = int((await self._reader.readline()).strip(), 16)
            if size == 0:
                return
            buffer += (await self._reader.readexactly(size + 2))[:-2]
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                if line:
                    yield line

    def close(self) -> None:
        self._writer.close()
