"""The WebSocket handshake the sandbox serves: uvicorn's websockets protocol, lenient about the
offered subprotocols.

kubectl 1.37 tunnels `port-forward` over a WebSocket whose `Sec-WebSocket-Protocol` is
`SPDY/3.1+portforward.k8s.io`. A `/` is not an RFC 7230 token character, so the `websockets`
package refuses that handshake with a 400 ("invalid Sec-WebSocket-Protocol header: expected
comma at 4") before the application sees it; kube-apiserver (gorilla/websocket) splits the
header at commas and accepts it. Here too the header is only split at commas (uvicorn already
does so for the ASGI scope), and the subprotocol answered is the one the application names in
its `websocket.accept`, as uvicorn does anyway. Nothing else of the handshake changes.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.datastructures import Headers
from websockets.server import ServerProtocol
from websockets.typing import Subprotocol


class _LenientServer(ServerProtocol):
    def process_subprotocol(self, headers: Headers) -> Subprotocol | None:
        return None  # uvicorn writes the header from the application's accept


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's `ws` protocol class for the sandbox."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _LenientServer(
            extensions=self.conn.available_extensions,
            max_size=self.config.ws_max_size,
            logger=self.conn.logger,
        )
