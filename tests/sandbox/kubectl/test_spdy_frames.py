"""SPDY/3.1 frames and header blocks (`sandbox.spdy`) round trip, and kubectl's real bytes read."""

from __future__ import annotations

import zlib

import pytest

from sandbox import spdy

# kubectl 1.37.1's first frame of a port-forward, as its WebSocket tunnel delivered it.
KUBECTL_SYN_STREAM = [
    b"\x80\x03", b"\x00\x01", b"\x00\x00\x00=", b"\x00\x00\x00\x01", b"\x00\x00\x00\x00",
    b"\x00", b"\x00",
    b"x\xf9\xe3\xc6\xa7\xc2\x02%:H\xf9[\x04J\xabL\x16\x06\x0c\x0c\x0c\x9cE\x90\xd8\xca\x04"
    b"\xa5bF\x03p:,)JM\xcc\x85\x165\xac\xa9\xa0\x88\x00\x00\x00\x00\xff\xff",
]  # fmt: skip


def test_kubectls_syn_stream_inflates_with_the_dictionary() -> None:
    reader = spdy.Reader()
    frames = [frame for chunk in KUBECTL_SYN_STREAM for frame in reader.feed(chunk)]
    assert len(spdy.DICTIONARY) == 1423
    assert frames == [
        spdy.Frame(
            spdy.SYN_STREAM,
            stream=1,
            headers={"port": "80", "requestid": "0", "streamtype": "error"},
        )
    ]


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(
            spdy.Frame(spdy.DATA, 3, spdy.FLAG_FIN, data=b"GET / HTTP/1.1\r\n"), id="data"
        ),
        pytest.param(spdy.Frame(spdy.SYN_STREAM, 5, headers={"streamtype": "data"}), id="syn"),
        pytest.param(spdy.Frame(spdy.SYN_REPLY, 5), id="syn-reply"),
        pytest.param(spdy.Frame(spdy.RST_STREAM, 7, status=spdy.CANCEL), id="rst"),
        pytest.param(spdy.Frame(spdy.SETTINGS, settings=((0, 7, 65536),)), id="settings"),
        pytest.param(spdy.Frame(spdy.PING, value=9), id="ping"),
        pytest.param(spdy.Frame(spdy.GOAWAY, 11), id="goaway"),
        pytest.param(spdy.Frame(spdy.WINDOW_UPDATE, 3, value=4096), id="window-update"),
    ],
)
def test_frames_round_trip_one_byte_at_a_time(frame: spdy.Frame) -> None:
    raw = spdy.Writer().write(frame)
    reader = spdy.Reader()
    assert [f for i in range(len(raw)) for f in reader.feed(raw[i : i + 1])] == [frame]


def test_header_blocks_share_one_compression_context_per_direction() -> None:
    writer, reader = spdy.Writer(), spdy.Reader()
    blocks = [{"streamtype": "error", "port": "80"}, {"streamtype": "data", "port": "80"}]
    raw = b"".join(writer.write(spdy.Frame(spdy.SYN_REPLY, 1, headers=h)) for h in blocks)
    assert [f.headers for f in reader.feed(raw)] == blocks
    assert spdy.decode_block(spdy.encode_block(blocks[0])) == blocks[0]


def test_garbage_is_a_protocol_error() -> None:
    body = zlib.compress(b"not a block")
    raw = b"\x80\x03\x00\x02\x00" + (4 + len(body)).to_bytes(3, "big") + b"\x00\x00\x00\x01" + body
    with pytest.raises(spdy.ProtocolError):
        spdy.Reader().feed(raw)
    with pytest.raises(spdy.ProtocolError, match="version 2"):
        spdy.Reader().feed(b"\x80\x02\x00\x01\x00\x00\x00\x00")
