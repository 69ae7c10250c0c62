"""SPDY/3.1 framing, the server's half, as much of it as `kubectl port-forward` needs.

kubectl and the kubelet speak SPDY/3.1 through moby/spdystream: each forwarded connection is a
pair of streams the client opens. This module knows frames, header blocks and streams, nothing
of pods or ports (`sandbox.portforward` is the protocol on top). It is sans-I/O: `Reader.feed`
takes bytes as they arrive, cut anywhere (kubectl's WebSocket tunnel carries each of Go's small
writes in a message of its own, a frame header in pieces), and returns whole frames; `Writer`
turns frames into bytes.

Frames (draft-mbelshe-httpbis-spdy-00): a control frame is `1 | version(15) | type(16) |
flags(8) | length(24) | payload`; a data frame `0 | stream id(31) | flags(8) | length(24) |
data`, FIN (0x01) ending the sender's half of the stream. Name/value header blocks (`count`,
then length-prefixed names and values, every integer 32-bit big-endian) are compressed with
zlib, one context per direction for the whole session, primed with the spec's dictionary
(`DICTIONARY`) and cut with a sync flush after each block. Flow control: each side may send
64 KiB on a stream before its peer's WINDOW_UPDATE; spdystream enforces none, and the
sandbox's `Session` acknowledges data as it reads it so that a strict client would not stall.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3
DATA = 0
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9
FLAG_FIN = 0x01
DEFAULT_WINDOW = 64 * 1024
MAX_FRAME = 16 * 1024 * 1024  # a frame longer than this is a broken or hostile peer

# RST_STREAM status codes used here.
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, CANCEL = 1, 2, 3, 5

# The SPDY/3 header compression dictionary (section 2.6.10.1): these words, each preceded by
# its length as a 32-bit big-endian integer, then the text of `_TAIL` as it is.
_WORDS = (
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset",
    "accept-encoding", "accept-language", "accept-ranges", "age", "allow", "authorization",
    "cache-control", "connection", "content-base", "content-encoding", "content-language",
    "content-length", "content-location", "content-md5", "content-range", "content-type", "date",
    "etag", "expect", "expires", "from", "host", "if-match", "if-modified-since", "if-none-match",
    "if-range", "if-unmodified-since", "last-modified", "location", "max-forwards", "pragma",
    "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after", "server", "te",
    "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
    "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url",
    "public", "set-cookie", "keep-alive", "origin",
)  # fmt: skip
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
    "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
    "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
    "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
    "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


def _dictionary() -> bytes:
    words = b"".join(struct.pack(">I", len(word)) + word.encode() for word in _WORDS)
    return words + _TAIL.encode()


DICTIONARY = _dictionary()

Headers = dict[str, str]  # multiple values of one name are NUL-separated, as on the wire


class ProtocolError(Exception):
    """The peer sent bytes that are not SPDY/3.1; the session cannot go on."""


@dataclass(frozen=True)
class Frame:
    """A frame as read or to be written; which fields matter depends on `kind`."""

    kind: int  # DATA, or a control frame type
    stream: int = 0  # the stream; GOAWAY: the last good stream
    flags: int = 0
    data: bytes = b""  # DATA's payload; for unknown control frames, their raw payload
    headers: Headers = field(default_factory=dict)  # SYN_STREAM, SYN_REPLY, HEADERS
    status: int = 0  # RST_STREAM, GOAWAY
    value: int = 0  # PING's id, WINDOW_UPDATE's delta
    settings: tuple[tuple[int, int, int], ...] = ()  # (flags, id, value) of SETTINGS

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


def encode_block(headers: Headers) -> bytes:
    """A name/value header block, uncompressed."""
    parts = [struct.pack(">I", len(headers))]
    for name, value in headers.items():
        raw_name, raw_value = name.lower().encode(), value.encode()
        parts += [struct.pack(">I", len(raw_name)), raw_name]
        parts += [struct.pack(">I", len(raw_value)), raw_value]
    return b"".join(parts)


def decode_block(raw: bytes) -> Headers:
    """An uncompressed name/value header block."""
    try:
        (count,), at = struct.unpack_from(">I", raw), 4
        found: Headers = {}
        for _ in range(count):
            pair = []
            for _ in range(2):
                (size,) = struct.unpack_from(">I", raw, at)
                pair.append(raw[at + 4 : at + 4 + size].decode("utf-8", "replace"))
                at += 4 + size
            found[pair[0]] = pair[1]
    except struct.error as exc:
        raise ProtocolError("a truncated SPDY header block") from exc
    return found


class Reader:
    """Frames out of a byte stream fed in pieces, with the session's inbound zlib context."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if length > MAX_FRAME:
                raise ProtocolError(f"a SPDY frame of {length} bytes is too long")
            if len(self._buffer) < 8 + length:
                break
            head, payload = bytes(self._buffer[:8]), bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            frames.append(self._frame(head, payload))
        return frames

    def _frame(self, head: bytes, payload: bytes) -> Frame:
        first, flags = int.from_bytes(head[:4], "big"), head[4]
        if not first & 0x80000000:
            return Frame(DATA, stream=first, flags=flags, data=payload)
        version, kind = (first >> 16) & 0x7FFF, first & 0xFFFF
        if version != VERSION:
            raise ProtocolError(f"SPDY version {version} is not spoken; only 3.1")
        try:
            return self._control(kind, flags, payload)
        except struct.error as exc:
            raise ProtocolError(f"a truncated SPDY control frame of type {kind}") from exc

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame:
        if kind == SYN_STREAM:
            stream = struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF
            return Frame(kind, stream, flags, headers=self._headers(payload[10:]))
        if kind in (SYN_REPLY, HEADERS):
            stream = struct.unpack_from(">I", payload)[0] & 0x7FFFFFFF
            return Frame(kind, stream, flags, headers=self._headers(payload[4:]))
        if kind in (RST_STREAM, GOAWAY):
            stream, status = struct.unpack_from(">II", payload)
            return Frame(kind, stream & 0x7FFFFFFF, flags, status=status)
        if kind == WINDOW_UPDATE:
            stream, delta = struct.unpack_from(">II", payload)
            return Frame(kind, stream & 0x7FFFFFFF, flags, value=delta & 0x7FFFFFFF)
        if kind == PING:
            return Frame(kind, flags=flags, value=struct.unpack_from(">I", payload)[0])
        if kind == SETTINGS:
            (count,) = struct.unpack_from(">I", payload)
            entries = []
            for index in range(count):
                word, value = struct.unpack_from(">II", payload, 4 + 8 * index)
                entries.append((word >> 24, word & 0xFFFFFF, value))
            return Frame(kind, flags=flags, settings=tuple(entries))
        return Frame(kind, flags=flags, data=payload)  # unknown: the session ignores it

    def _headers(self, compressed: bytes) -> Headers:
        try:
            raw = self._inflate.decompress(compressed)
        except zlib.error as exc:
            raise ProtocolError(f"a SPDY header block does not inflate: {exc}") from exc
        return decode_block(raw)


class Writer:
    """Bytes of frames, with the session's outbound zlib context."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def write(self, frame: Frame) -> bytes:
        if frame.kind == DATA:
            return _head(frame.stream & 0x7FFFFFFF, frame.flags, frame.data) + frame.data
        return self._control(frame)

    def _control(self, frame: Frame) -> bytes:
        kind = frame.kind
        if kind == SYN_STREAM:
            payload = struct.pack(">IIH", frame.stream, 0, 0) + self._block(frame.headers)
        elif kind in (SYN_REPLY, HEADERS):
            payload = struct.pack(">I", frame.stream) + self._block(frame.headers)
        elif kind in (RST_STREAM, GOAWAY):
            payload = struct.pack(">II", frame.stream, frame.status)
        elif kind == WINDOW_UPDATE:
            payload = struct.pack(">II", frame.stream, frame.value)
        elif kind == PING:
            payload = struct.pack(">I", frame.value)
        elif kind == SETTINGS:
            payload = struct.pack(">I", len(frame.settings)) + b"".join(
                struct.pack(">II", (flags << 24) | ident, value)
                for flags, ident, value in frame.settings
            )
        else:
            payload = frame.data
        return _head(0x80000000 | (VERSION << 16) | kind, frame.flags, payload) + payload

    def _block(self, headers: Headers) -> bytes:
        raw = encode_block(headers)
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


def _head(first: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">IB", first, flags) + len(payload).to_bytes(3, "big")
