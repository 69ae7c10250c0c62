"""Scripted models that act as a real model would: each turn after the first reads what the
tools answered (a pod's generated name, the finding's code) before it asks for more.

- `investigator`: how a model plans the loop's `learn` for a workload: it lists the pods, picks
  the one that is not ready, reads its description, its events and its logs (the crashed
  instance's when it restarted), then says what it read. With nothing unready it answers at once.
- `diagnostician`: how a model follows the diagnose-workload skill for "why is web failing?":
  diagnose and recommend, then the Warning events, the logs of the pod the top finding names and
  the rollout history, then an answer naming the finding it read.
- `claims_fixed`: a model that answers "fixed" without calling any tool.

Each is a factory: a heal run and a question each get a model of their own, as each run of a
real model starts from its prompt.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from agents.runtime.scripted import ScriptedChatModel, calls, shown

NAMESPACE = "shop"


def investigator(app: str = "web", namespace: str = NAMESPACE) -> ScriptedChatModel:
    def look_closer(messages: list[BaseMessage]) -> AIMessage:
        pods = shown(messages, "list_resources").get("items", [])
        unready = [p for p in pods if not _ready(p)]
        if not unready:
            return AIMessage(f"Every pod of {app} is ready; I see nothing to heal.")
        pod = unready[0]
        logs: dict[str, Any] = {"pod": pod["name"], "namespace": namespace, "tail": 20}
        if pod.get("restarts"):
            logs["previous"] = True
        return calls(
            ("describe", {"kind": "pod", "name": pod["name"], "namespace": namespace}),
            ("events", {"namespace": namespace, "kind": "Pod", "name": pod["name"]}),
            ("logs", logs),
        )

    def conclude(messages: list[BaseMessage]) -> AIMessage:
        described = shown(messages, "describe").get("summary", {})
        warnings = [e for e in shown(messages, "events").get("items", []) if _warning(e)]
        said = "; ".join(f"{e.get('reason')}: {e.get('message')}" for e in warnings[:2])
        return AIMessage(f"{described.get('name', 'the pod')} is failing. The events say {said}.")

    listing = {"kind": "pods", "namespace": namespace, "label_selector": f"app={app}"}
    return ScriptedChatModel(turns=[calls(("list_resources", listing)), look_closer, conclude])


def diagnostician(app: str = "web", namespace: str = NAMESPACE) -> ScriptedChatModel:
    scope = {"namespace": namespace, "kind": "deployment", "name": app}

    def follow_up(messages: list[BaseMessage]) -> AIMessage:
        [top, *_] = shown(messages, "diagnose")["findings"]
        pod = next(r["name"] for r in top["related"] if r["kind"] == "Pod")
        crashed = top["code"] in ("CrashLoopBackOff", "OOMKilled")
        return calls(
            ("events", {"namespace": namespace, "type": "Warning"}),
            ("logs", {"pod": pod, "namespace": namespace, "tail": 20, "previous": crashed}),
            ("rollout_history", {"name": app, "namespace": namespace}),
        )

    def conclude(messages: list[BaseMessage]) -> AIMessage:
        [top, *_] = shown(messages, "diagnose")["findings"]
        return AIMessage(f"the cause is {top['code']}: {top['summary']}")

    return ScriptedChatModel(
        turns=[calls(("diagnose", scope), ("recommend", scope)), follow_up, conclude]
    )


def claims_fixed() -> ScriptedChatModel:
    return ScriptedChatModel(turns=[AIMessage("Fixed: web is healthy again.")])


def _ready(pod: dict[str, Any]) -> bool:
    ready, _, wanted = str(pod.get("ready", "")).partition("/")
    return bool(wanted) and ready == wanted and pod.get("status") == "Running"


def _warning(event: dict[str, Any]) -> bool:
    return str(event.get("type", "")).lower() == "warning"
