"""Protobuf: decoding the request bodies kubectl's typed commands send, and a small writer.

kubectl 1.37 sends `application/vnd.kubernetes.protobuf` for every object it builds itself
(`create deployment`, `create token`, `auth can-i`, `autoscale`...) and never retries in JSON,
so the sandbox must read these bodies. `decode_object` turns one into the same JSON-shaped dict
the JSON body would have been; the HTTP layer calls it and nothing else.

    wire.py       the protobuf wire format (varints, length-delimited runs)
    layout.py     the spec language of the tables, and the linked `Catalog`
    messages/     the tables: field number -> JSON name and type, per Kubernetes message
    values.py     JSON forms of Quantity, IntOrString, Time, Duration, bytes, raw JSON
    decode.py     the `k8s\\x00` + runtime.Unknown envelope, and the walk over the tables
    encode.py     a protobuf writer, for the one protobuf document served (OpenAPI v2)

API responses stay JSON, which kubectl accepts. This package knows nothing of HTTP, storage or
validation.
"""

from sandbox.protobuf.decode import decode_object

__all__ = ["decode_object"]
