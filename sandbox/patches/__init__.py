"""The four ways a client changes an object in place, applied exactly as kube-apiserver does.

    apply_merge_patch             application/merge-patch+json        (merge.py)
    apply_json_patch              application/json-patch+json         (json_patch.py)
    apply_strategic_merge_patch   application/strategic-merge-patch+json (strategic.py)
    server_side_apply             application/apply-patch+yaml        (apply.py)
    record_update                 managedFields for every other write (managed.py)

Each takes plain JSON-shaped dicts, never modifies its inputs, and raises the sandbox's own
Status errors (`sandbox.errors`). None of them knows about storage, HTTP or content types:
the REST layer picks the function from the request's Content-Type.
"""

from sandbox.patches.apply import server_side_apply
from sandbox.patches.json_patch import apply_json_patch
from sandbox.patches.managed import record_update
from sandbox.patches.merge import apply_merge_patch
from sandbox.patches.strategic import apply_strategic_merge_patch

__all__ = [
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "record_update",
    "server_side_apply",
]
