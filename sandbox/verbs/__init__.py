"""Resource requests, verb by verb: turn a routed request into object-service calls and replies.

`exchange` holds the one request in flight; `reads` answers get, list, watch, logs and metrics
(as `meta.k8s.io/v1 Table` when kubectl asks); `writes` answers create, update, patch and
delete, honouring `dryRun`, `fieldManager`, `fieldValidation` and `force`. Subresources with
their own semantics live in sandbox.subresources, the review kinds in sandbox.reviews.
"""

from __future__ import annotations

from sandbox import reviews
from sandbox.http import dumps, respond
from sandbox.registry import VIRTUAL_GROUPS
from sandbox.verbs.exchange import Exchange
from sandbox.verbs.reads import metrics, read
from sandbox.verbs.writes import DECODERS, delete, write

__all__ = ["Exchange", "serve"]


async def serve(ex: Exchange) -> None:
    rt, verb = ex.rt, ex.target.verb
    if rt.group == "metrics.k8s.io":
        await metrics(ex)
    elif rt.group in VIRTUAL_GROUPS:
        answer = reviews.answer(
            rt,
            ex.body(DECODERS),
            user=ex.user,
            namespace=ex.target.namespace,
            authz=ex.cluster.authz,
            authn=ex.cluster.authn,
            now=ex.cluster.clock.now(),
        )
        await respond(ex.send, 201, dumps(answer))
    elif verb in ("get", "list", "watch"):
        await read(ex)
    elif verb in ("delete", "deletecollection"):
        await delete(ex)
    else:
        await write(ex)
