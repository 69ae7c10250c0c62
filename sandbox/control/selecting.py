"""`SelectorIndex`: the pods each selecting object of a namespace selects, kept current from pod
changes.

Controllers whose objects select pods by label (Services for the endpoint controllers,
PodDisruptionBudgets for the disruption controller) must stay cheap with thousands of pods, so
none scans a namespace per reconcile: the index matches each pod change against the few
selectors that could select it and updates their member sets. It knows nothing of what the
selecting objects are for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from sandbox.control.runtime import PODS, Item
from sandbox.selectors import LabelSelector
from sandbox.store import Change, Key, Obj, Store


class _Selecting:
    """The selectors of one namespace, indexed by a label each needs, so a pod change is matched
    against the few that could select it rather than all of them."""

    def __init__(self) -> None:
        self.selectors: dict[str, LabelSelector] = {}
        self._by_pair: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._by_key: dict[str, set[str]] = defaultdict(set)
        self._always: set[str] = set()

    def add(self, name: str, selector: LabelSelector) -> None:
        self.selectors[name] = selector
        for requirement in selector.requirements:
            if requirement.operator in ("=", "in"):
                for value in requirement.values:
                    self._by_pair[(requirement.key, value)].add(name)
                return
        for requirement in selector.requirements:
            if requirement.operator == "exists":
                self._by_key[requirement.key].add(name)
                return
        self._always.add(name)

    def candidates(self, labels: dict[str, str]) -> set[str]:
        found = set(self._always)
        for key, value in labels.items():
            found.update(self._by_key.get(key, ()))
            found.update(self._by_pair.get((key, value), ()))
        return found


class SelectorIndex:
    """The pods each object of `key` selects, per namespace, kept current from pod changes.

    Selectors are re-read lazily when the store reports any change to `key`; the member set of
    one object is built by one scan of its namespace the first time it is asked for (or when its
    selector changed) and then maintained by `on_pod_change`.
    """

    def __init__(self, store: Store, key: Key, selector_of: Callable[[Obj], LabelSelector | None]):
        self._store = store
        self._key = key
        self._selector_of = selector_of
        self._version = -1
        self._selecting: dict[str, _Selecting] = {}
        self._members: dict[Item, tuple[LabelSelector, set[str]]] = {}

    def selectors(self, namespace: str) -> dict[str, LabelSelector]:
        return self._namespace(namespace).selectors

    def _namespace(self, namespace: str) -> _Selecting:
        version = self._store.key_version(self._key)
        if version != self._version:
            self._version = version
            self._selecting.clear()
        found = self._selecting.get(namespace)
        if found is None:
            found = _Selecting()
            for obj in self._store.list(self._key, namespace):
                selector = self._selector_of(obj)
                if selector is not None and not selector.matches_nothing:
                    found.add(obj["metadata"]["name"], selector)
            self._selecting[namespace] = found
        return found

    def on_pod_change(self, change: Change) -> list[str]:
        """Names of the objects selecting the pod before or after the change."""
        new_labels = None if change.type == "DELETED" else labels_of(change.object)
        old_labels = labels_of(change.old) if change.old is not None else None
        selecting = self._namespace(change.namespace)
        candidates = selecting.candidates(new_labels or {}) | selecting.candidates(old_labels or {})
        touched = []
        for name in sorted(candidates):
            selector = selecting.selectors[name]
            now = new_labels is not None and selector.matches(new_labels)
            before = old_labels is not None and selector.matches(old_labels)
            members = self._members.get((change.namespace, name))
            if members is not None and members[0] == selector:
                if now:
                    members[1].add(change.name)
                else:
                    members[1].discard(change.name)
            if now or before:
                touched.append(name)
        return touched

    def pods(self, namespace: str, name: str, selector: LabelSelector) -> list[Obj]:
        """The live pods `selector` (the object's current one) selects, sorted by name."""
        members = self._members.get((namespace, name))
        if members is None or members[0] != selector:
            names = {
                p["metadata"]["name"]
                for p in self._store.list(PODS, namespace)
                if selector.matches(labels_of(p))
            }
            members = (selector, names)
            self._members[(namespace, name)] = members
        found = []
        for pod_name in sorted(members[1]):
            pod = self._store.get(PODS, namespace, pod_name)
            if pod is not None:
                found.append(pod)
        return found

    def forget(self, namespace: str, name: str) -> None:
        self._members.pop((namespace, name), None)


def labels_of(obj: Obj) -> dict[str, str]:
    labels: dict[str, str] = obj["metadata"].get("labels") or {}
    return labels
