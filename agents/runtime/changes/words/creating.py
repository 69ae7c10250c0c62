"""Readers of a new workload from its description (ConfigMaps, claims, Secrets and mounts are
`stored`'s).

"run redis:7 as cache with 2 replicas in staging", "create a deployment api with image
nginx:1.27 and 3 replicas", "create deployment web --image=nginx --replicas=2", "start a pod
named debug running busybox:1.36 with command `sleep 3600`", "a job that runs `python report.py`
every night at 2", "create a cronjob data-backup that runs busybox to echo 'Backup completed'
every day at midnight", "create an httpd:alpine pod limits-pod with CPU request 60m, limit
600m and memory request/limit of 62Mi". Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import FILLER, Sentence, wordset
from agents.runtime.changes.words.vocabulary import CPU_WORDS, IMAGE_REF, KNOWN_IMAGES, MEMORY_WORDS
from agents.runtime.changes.words.workloads import LINKS, container_named

_KINDS = {
    "deployment": "Deployment",
    "deploy": "Deployment",
    "pod": "Pod",
    "job": "Job",
    "cronjob": "CronJob",
    "cron": "CronJob",
    "statefulset": "StatefulSet",
    "sts": "StatefulSet",
    "daemonset": "DaemonSet",
}
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SAY = frozenset(
    {
        "echo",
        "echoes",
        "print",
        "prints",
        "say",
        "says",
        "log",
        "logs",
        "output",
        "outputs",
        "write",
        "writes",
    }
)
NOT_NAMES = (
    FILLER
    | LINKS
    | _SAY
    | frozenset(
        [
            "create",
            "run",
            "start",
            "launch",
            "spin",
            "make",
            "add",
            "new",
            "with",
            "image",
            "images",
            "using",
            "use",
            "replica",
            "replicas",
            "that",
            "which",
            "runs",
            "running",
            "execute",
            "executes",
            "command",
            "and",
            "every",
            "daily",
            "hourly",
            "nightly",
            "weekly",
            "deployment",
            "pod",
            "job",
            "cronjob",
            "cron",
            "statefulset",
            "daemonset",
            "container",
            "containers",
            "port",
            "called",
            "named",
            "as",
            "schedule",
            "scheduled",
            "simple",
            "container's",
            "deploy",
            "copies",
            "copy",
            "instances",
            "instance",
            "namespace",
            "then",
            "sleep",
            "sleeps",
            "also",
            "request",
            "requests",
            "limit",
            "limits",
            "cpu",
            "memory",
            "mem",
            "in",
            "into",
            "inside",
        ]
    )
)


_NOT_GIVEN = NOT_NAMES - _SAY  # what a name said after "called" or a kind cannot be


def create(sentence: Sentence, at: int) -> Asked:
    low, flags = sentence.low, sentence.flags
    params: dict[str, Any] = {}
    kind_at = next((i for i, w in enumerate(low) if w in _KINDS and i >= at - 1), -1)
    kind = _KINDS[low[kind_at]] if kind_at != -1 else ""
    image = flags.get("image", "") or _image(sentence)
    name = flags.get("name", "") or _name(sentence, kind_at)
    schedule = flags.get("schedule", "") or amounts.schedule(sentence)
    if schedule:
        kind, params["schedule"] = "CronJob", schedule
    replicas = _replicas(sentence)
    kind = kind or "Deployment"  # "run redis:7 as cache": a service that keeps running
    command = _command(sentence)
    if command:
        params["command"] = command
    port = int(flags["port"]) if flags.get("port", "").isdigit() else amounts.port(sentence)
    if port:
        params["port"] = port
    env = {k: v for k, v in amounts.pairs(sentence).items() if k.isupper() or "_" in k}
    if env:
        params["env"] = env
    container = container_named(sentence)
    if container:
        params["container"] = container
    resources = _requests_and_limits(sentence)
    if resources:
        params["resources"] = resources
    if not image and command:  # "a job that runs `python report.py`": its interpreter's image
        image = _RUNTIMES.get(command[-1].split()[0] if command[0] == "sh" else command[0], "")
        params["image_chosen"] = bool(image)
    params |= {
        "kind": kind,
        "image": image,
        "name": name or _from_command(command, kind) or _from_image(image),
    }
    if replicas:
        params["replicas"] = replicas
    sentence.take(*range(len(low)))  # a new object: nothing left names an existing one
    if not params["image"]:
        return Asked(
            "create",
            params,
            kind=kind,
            problem="from which image? Say e.g. 'run "
            "redis:7 as cache in staging' or 'create a deployment web with image "
            "nginx:1.27'",
        )
    return Asked("create", params, kind=kind, namespace=namespace_said(sentence))


def _image(sentence: Sentence) -> str:
    for index, word in enumerate(sentence.raw):
        low = sentence.low[index]
        if IMAGE_REF.match(low) and not re.fullmatch(r"\d+:\d+", low):
            sentence.take(index)
            return word
    for index, word in enumerate(sentence.low):
        following = sentence.at(index + 1)
        if word == "image" and following and following not in LINKS:
            sentence.take(index, index + 1)
            return sentence.raw[index + 1]
    for index, word in enumerate(sentence.low):  # "a nginx pod", "runs busybox", "with redis"
        if word in KNOWN_IMAGES:
            sentence.take(index)
            return word
    return ""


# A command's interpreter, and the image that has it, when only the command is said.
_RUNTIMES = {
    "python": "python:3.12-slim",
    "python3": "python:3.12-slim",
    "node": "node:22",
    "npm": "node:22",
    "ruby": "ruby:3.3",
    "perl": "perl:5.40",
    "go": "golang:1.23",
    "echo": "busybox:1.36",
    "sleep": "busybox:1.36",
    "date": "busybox:1.36",
    "sh": "busybox:1.36",
    "wget": "busybox:1.36",
    "curl": "curlimages/curl:8.11.0",
    "printf": "busybox:1.36",
    "ls": "busybox:1.36",
    "cat": "busybox:1.36",
}


def _from_command(command: list[str], kind: str) -> str:
    """A job's name from what it runs: the script's stem ("report.py" -> report)."""
    if kind not in ("Job", "CronJob") or not command:
        return ""
    for word in " ".join(command).split():
        stem = word.rsplit("/", 1)[-1].split(".")[0].lower()
        if "." in word and NAME.match(stem):
            return stem
    first = command[-1].split()[0] if command[0] == "sh" and len(command) > 2 else command[0]
    base = first.rsplit("/", 1)[-1].lower()
    return f"{base}-{'cron' if kind == 'CronJob' else 'job'}" if NAME.match(base) else ""


def _from_image(image: str) -> str:
    base = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
    return base if NAME.match(base) else ""


def _name(sentence: Sentence, kind_at: int) -> str:
    """The name said for the new object: after "called", "named", "as" or "call it", or right
    after its kind ("create deployment echo"). A word of a command ("echo", "print") is a name
    there: what runs is said elsewhere."""
    low = sentence.low
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if word in ("call", "name") and following in ("it", "them") and index + 2 < len(low):
            index, following = index + 1, sentence.at(index + 2)  # "call it cache"
            word = "called"
        cue = word in ("called", "named", "as", "name") and NAME.match(following)
        if cue and following not in _NOT_GIVEN and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return following
    if kind_at != -1:
        following = sentence.at(kind_at + 1)
        if NAME.match(following) and following not in _NOT_GIVEN and sentence.free(kind_at + 1):
            sentence.take(kind_at + 1)
            return following
        before = sentence.at(kind_at - 1)  # "an nginx pod web-server": the word after the kind
        if before in KNOWN_IMAGES and NAME.match(following) and following not in _NOT_GIVEN:
            sentence.take(kind_at + 1)
            return following
    return ""


def _replicas(sentence: Sentence) -> int:
    if sentence.flags.get("replicas", "").isdigit():
        return int(sentence.flags["replicas"])
    for index, word in enumerate(sentence.low):
        following = sentence.at(index + 1)
        number = amounts.count(word)
        if (
            number is not None
            and following in ("replica", "replicas", "copies", "instances", "pods")
            and word not in ("a", "an")
        ):
            sentence.take(index, index + 1)
            return number
    return 0


def _command(sentence: Sentence) -> list[str]:
    """The container's command: quoted text or kubectl's "-- cmd", turned into a shell line
    when said in words ("echo 'Backup completed' and then sleep for 5 seconds")."""
    low = sentence.low
    steps: list[str] = []
    for index, word in enumerate(low):
        if word.startswith("\u27e8q"):
            number = int(word[2:-1])
            text = sentence.quoted[number]
            before = sentence.at(index - 1)
            steps.append(f"echo {_shell_quote(text)}" if before in _SAY else text)
        elif word in ("sleep", "sleeps", "wait", "waits"):
            seconds = re.search(r"^(?:for )?(\d+)", " ".join(low[index + 1 : index + 3]))
            if seconds:
                steps.append(f"sleep {seconds[1]}")
        elif (
            word in _SAY
            and sentence.free(index)
            and not sentence.at(index + 1).startswith("\u27e8q")
        ):
            said = _said_in_words(sentence, index + 1)
            if said:
                steps.append(said)
    if not steps:
        return []
    if len(steps) == 1 and not re.search(r"[;&|$<>'\"*]", steps[0]):
        return steps[0].split()  # a plain command: its words are the arguments, as kubectl runs
    return ["sh", "-c", "; ".join(steps)]


_SAID_UNTIL = wordset(
    "and then every each in with at on using from for daily hourly nightly weekly once "
    "twice until as"
)


def _said_in_words(sentence: Sentence, start: int) -> str:
    """What a command word says, unquoted: "that echoes hello world" -> echo 'hello world';
    "that prints the date" -> date. The words up to the next clause are taken as typed."""
    end = start
    while sentence.free(end) and sentence.low[end] not in _SAID_UNTIL:
        end += 1
    words = sentence.raw[start:end]
    if not words or any(w.startswith("\u27e8") for w in words):
        return ""
    sentence.take(*range(start - 1, end))
    if [w.lower() for w in words if w.lower() != "the"] in (["date"], ["time"]):
        return "date"
    return f"echo {_shell_quote(' '.join(words))}"


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _requests_and_limits(sentence: Sentence) -> dict[str, dict[str, str]]:
    """{"requests": {...}, "limits": {...}} from "CPU request 60m, limit 600m, and memory
    request/limit of 62Mi", "with 256Mi memory", "limits of 1 cpu and 512Mi"."""
    low = sentence.low
    found: dict[str, dict[str, str]] = {}
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        size = amounts.size_at(sentence, index)
        what = "memory" if size else ""
        cpu = re.fullmatch(r"(\d+(?:\.\d+)?)(m)?", word) if not size else None
        if cpu and (cpu[2] or amounts.near(low, index, CPU_WORDS | MEMORY_WORDS) in CPU_WORDS):
            if not cpu[2] and not (set(low[max(0, index - 4) : index + 2]) & CPU_WORDS):
                continue
            size, what = word, "cpu"
            sentence.take(index)
        if not size:
            continue
        clause = " ".join(low[max(0, index - 6) : index])
        clause = re.split(r"[,;]| and ", clause)[-1] if "," in clause else clause
        cues = re.findall(r"request/limits?|requests?/limits?|requests?|limits?", clause)
        last = cues[-1] if cues else ""
        slots = (
            ["requests", "limits"]
            if "/" in last
            else ["limits"]
            if last.startswith("limit")
            else ["requests"]
        )
        for slot in slots:
            found.setdefault(slot, {})[what] = size
    return found


def namespace_said(sentence: Sentence) -> str | None:
    if sentence.flags.get("namespace"):
        return sentence.flags["namespace"]
    low = sentence.low
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if word == "namespace" and NAME.match(following) and following not in NOT_NAMES:
            return following
        if word == "in" and following == "the" and sentence.at(index + 3) in ("namespace", "ns"):
            return sentence.at(index + 2)
        named = word == "in" and NAME.match(following) and following not in NOT_NAMES
        if named and not following.isdigit():
            return following
    return None


READERS: dict[str, Reader] = {
    "create": create,
}
