"""Server-side Table rendering: the columns and cells `kubectl get` prints, as Kubernetes 1.37
computes them.

`render_table(rt, objects, include_object=..., now=..., list_meta=...)` answers a request whose
Accept header asks for `as=Table;g=meta.k8s.io;v=v1`. One module per family of kinds holds its
printers (pods, workloads, autoscaling, networking, storage, cluster, events, rbac); `custom`
builds tables for custom resources from CRD printer columns, through the `jsonpath` subset.
`human_duration` is the AGE formatting, exposed for anyone who prints ages the same way.

The package reads plain JSON-shaped objects and never modifies them; it knows nothing of HTTP,
storage or watches (a watch wraps each event's object in a one-row Table by calling
`render_table` with a single object).
"""

from sandbox.tables.durations import human_duration
from sandbox.tables.render import IncludeObject, printer_for, render_table

__all__ = ["IncludeObject", "human_duration", "printer_for", "render_table"]
