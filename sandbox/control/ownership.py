"""Owner references as controllers write and read them.

A controller marks what it creates with a controller reference (`controller: true`, and
`blockOwnerDeletion: true` so foreground deletion of the owner waits for it), and recognises its
own by the owner's uid: names can be reused, uids cannot.
"""

from __future__ import annotations

from typing import Any

from sandbox.store import Obj


def controller_ref(owner: Obj) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_uid(obj: Obj) -> str | None:
    """The uid of the object's controlling owner, if it has one."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


def controlled_by(obj: Obj, owner_uid: str) -> bool:
    return controller_uid(obj) == owner_uid
