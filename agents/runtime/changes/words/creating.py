"""Readers of what makes something new: a workload from a description, a ConfigMap, a volume
mounted into a workload, and a bigger volume.

"run redis:7 as cache with 2 replicas in staging", "create a deployment api with image
nginx:1.27 and 3 replicas", "create deployment web --image=nginx --replicas=2", "start a pod
named debug running busybox:1.36 with command `sleep 3600`", "a job that runs `python report.py`
every night at 2", "create a cronjob data-backup that runs busybox to echo 'Backup completed'
every day at midnight", "create an httpd:alpine pod limits-pod with CPU request 60m, limit
600m and memory request/limit of 62Mi"; "create a configmap app-config with LOG_LEVEL=debug",
"add key mode=fast to configmap app-config", "remove key mode from configmap app-config";
"mount configmap size-settings into web at /etc/sizes", "use configmap app-config as web's
environment"; "resize the data pvc to 15Gi". Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.named import GROW_VERBS, STORAGE_WORDS
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
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
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
_NOT_NAMES = (
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


_NOT_GIVEN = _NOT_NAMES - _SAY  # what a name said after "called" or a kind cannot be


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
    return Asked("create", params, kind=kind, namespace=_namespace(sentence))


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
        if "." in word and _NAME.match(stem):
            return stem
    first = command[-1].split()[0] if command[0] == "sh" and len(command) > 2 else command[0]
    base = first.rsplit("/", 1)[-1].lower()
    return f"{base}-{'cron' if kind == 'CronJob' else 'job'}" if _NAME.match(base) else ""


def _from_image(image: str) -> str:
    base = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
    return base if _NAME.match(base) else ""


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
        cue = word in ("called", "named", "as", "name") and _NAME.match(following)
        if cue and following not in _NOT_GIVEN and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return following
    if kind_at != -1:
        following = sentence.at(kind_at + 1)
        if _NAME.match(following) and following not in _NOT_GIVEN and sentence.free(kind_at + 1):
            sentence.take(kind_at + 1)
            return following
        before = sentence.at(kind_at - 1)  # "an nginx pod web-server": the word after the kind
        if before in KNOWN_IMAGES and _NAME.match(following) and following not in _NOT_GIVEN:
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


def _namespace(sentence: Sentence) -> str | None:
    if sentence.flags.get("namespace"):
        return sentence.flags["namespace"]
    low = sentence.low
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if word == "namespace" and _NAME.match(following) and following not in _NOT_NAMES:
            return following
        if word == "in" and following == "the" and sentence.at(index + 3) in ("namespace", "ns"):
            return sentence.at(index + 2)
        named = word == "in" and _NAME.match(following) and following not in _NOT_NAMES
        if named and not following.isdigit():
            return following
    return None


def configmap(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    removing = sentence.at(at) in ("remove", "delete", "drop", "unset")
    data: dict[str, str | None] = dict(amounts.pairs(sentence, strip=True))
    for flag, value in sentence.flags.items():  # --from-literal=key=value
        if flag == "from-literal":
            key, _, val = value.partition("=")
            data[key] = val
    if removing:
        for index, word in enumerate(low):
            if word in ("key", "keys", "entry") and sentence.free(index + 1):
                data[sentence.raw[index + 1]] = None
                sentence.take(index, index + 1)
    if removing:  # "remove MODE from configmap app-config": its NAME is the key
        data |= {w: None for i, w in enumerate(sentence.raw)
                 if sentence.free(i) and re.fullmatch(r"[A-Z][A-Z0-9_]+", w)}  # fmt: skip
    name = sentence.flags.get("name", "") or _named_object(sentence, {"configmap", "cm"})
    params: dict[str, Any] = {"data": data}
    said_new = any(
        word in ("configmap", "cm", "config") and index and low[index - 1] in ("a", "an")
        for index, word in enumerate(low)
    )  # "put a configmap named flags in shop": an indefinite article asks for a new one
    if said_new or sentence.has("create", "make", "new", "need", "needs", "define"):
        params["create"] = True  # a new ConfigMap; otherwise keys of one that exists
    if name:
        params["name"] = name
    sentence.take(*range(len(low)))
    if not name:
        return Asked(
            "configmap",
            params,
            kind="ConfigMap",
            problem="which ConfigMap? Say e.g. "
            "'create a configmap app-config with LOG_LEVEL=debug'",
        )
    if not data:
        return Asked(
            "configmap",
            params,
            kind="ConfigMap",
            problem="with which keys? Say e.g. 'create a configmap app-config with mode=fast'",
        )
    return Asked("configmap", params, kind="ConfigMap", namespace=_namespace(sentence))


_STORAGE_SAID = wordset(
    "persistent persistentvolume request requests capacity size its without creating resources "
    "there is with that can you"
)


def storage(sentence: Sentence, at: int) -> Asked:
    size = ""
    for index in range(len(sentence.low)):
        size = amounts.size_at(sentence, index) if sentence.free(index) else ""
        if size:
            break
    sentence.take_words(GROW_VERBS | STORAGE_WORDS | _STORAGE_SAID | LINKS)
    if not size:
        return Asked("storage", problem="to what size? Say e.g. 'resize the data pvc to 15Gi'")
    return Asked("storage", {"size": size})


def claim(sentence: Sentence, at: int) -> Asked:
    """A new PersistentVolumeClaim: its size, its name, a storage class when one is named,
    shared (ReadWriteMany) when said so."""
    size = ""
    for index in range(len(sentence.low)):
        size = amounts.size_at(sentence, index) if sentence.free(index) else ""
        if size:
            break
    low = sentence.low
    name = sentence.flags.get("name", "") or next(
        (low[i + 1] for i, w in enumerate(low[:-1])
         if w in ("named", "called") and _NAME.match(low[i + 1])),
        "",
    ) or _named_object(sentence, _CLAIM_WORDS - {"volume", "persistent"})  # fmt: skip
    kept = next(
        (low[i + 1] for i, w in enumerate(low[:-1]) if w in ("class", "storageclass")
         and _NAME.match(low[i + 1]) and low[i + 1] not in _LINKED),
        "",
    )  # fmt: skip
    params: dict[str, Any] = {"size": size, "name": name}
    if kept:
        params["storage_class"] = kept
    if sentence.has("rwx", "readwritemany", "shared") or "read write many" in " ".join(low):
        params["shared"] = True
    said = {name, kept} - {""}
    sentence.take_words(_CLAIM_WORDS | _CLAIM_SAID | said | {sentence.at(at)})
    if not size:
        return Asked("claim", params, problem="how big? Say e.g. 'create a 1Gi pvc named data'")
    if not name:
        return Asked("claim", params, problem="what should it be called? Say e.g. "
                     "'create a 1Gi pvc named data'")  # fmt: skip
    return Asked("claim", params, kind="PersistentVolumeClaim")


_CLAIM_WORDS = frozenset({"pvc", "claim", "disk", "persistentvolumeclaim", "volumeclaim"})
_CLAIM_SAID = frozenset(
    {"a", "an", "new", "persistent", "volume", "named", "called", "of", "with", "storage",
     "class", "storageclass", "shared", "rwx", "readwritemany", "read", "write", "many", "size",
     "please"}
)  # fmt: skip
_SOURCES = frozenset({"configmap", "cm", "secret", "pvc", "claim"})


def _named_object(sentence: Sentence, kinds: set[str] | frozenset[str]) -> str:
    """The name said beside a kind word: "configmap app-config", "the app-config configmap",
    "a configmap called app-config", "config map app-config"; "" when none. Marked read."""
    low = sentence.low
    for index, word in enumerate(low):
        if word == "map" and sentence.at(index - 1) == "config":
            word = "configmap"
        if word not in kinds:
            continue
        after, before = sentence.at(index + 1), sentence.at(index - 1)
        if after in ("called", "named"):
            after, index = sentence.at(index + 2), index + 1
            if _NAME.match(after) and after not in _LINKED:  # said to be its name: it is
                sentence.take(index, index + 1)
                return after
        if _NAME.match(after) and after not in _NOT_NAMES | _LINKED and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return after
        articled = sentence.at(index - 2) in ("the", "my", "our", "its")  # "the data pvc"
        if (
            _NAME.match(before)
            and (articled or before not in _NOT_NAMES | _LINKED)
            and sentence.free(index - 1)
        ):
            sentence.take(index - 1, index)
            return before
    return ""


_LINKED = frozenset(
    {"into", "in", "under", "at", "available", "as", "holding", "with", "from", "for", "keys",
     "key", "values", "data", "and", "or", "is", "it", "them"}
)  # fmt: skip


def mount(sentence: Sentence, at: int) -> Asked:
    """A ConfigMap (or Secret, or claim) into a workload: as files at a path, or as its
    environment (every key, or one key as one variable: "COLOR from key color of colors")."""
    low = sentence.low
    params: dict[str, Any] = {}
    source_at = sentence.find(_SOURCES)
    source = _named_object(sentence, _SOURCES)
    if source:
        kinds = {
            "secret": "Secret",
            "pvc": "PersistentVolumeClaim",
            "claim": "PersistentVolumeClaim",
        }
        params["source"] = {"kind": kinds.get(low[source_at], "ConfigMap"), "name": source}
    path = amounts.path(sentence)
    if path:
        params["path"] = path
    variable = next((w for w in sentence.raw if re.fullmatch(r"[A-Z][A-Z0-9_]*", w)), "")
    key = re.search(r"\bkey '?(?!of\b|from\b|in\b)([A-Za-z0-9_.-]+)", " ".join(sentence.raw))
    if variable:
        params["variable"] = variable
    if key:
        params["key"] = key[1]
    if not path:
        params["as_env"] = True
    sentence.take_words(
        {
            "mount",
            "mounted",
            "mounts",
            "volume",
            "into",
            "at",
            "under",
            "as",
            "its",
            "env",
            "environment",
            "variables",
            "vars",
            "envfrom",
            "use",
            "load",
            "from",
            "key",
            "keys",
            "value",
            "all",
            "directory",
            "dir",
            "folder",
            "files",
            "file",
            "attach",
            "the",
            "config",
            "map",
        }
        | LINKS
        | {variable.lower(), (key[1].lower() if key else "")}
    )
    if "source" not in params:
        return Asked(
            "mount",
            params,
            problem="mount what? Say e.g. 'mount configmap app-config into web at /etc/config'",
        )
    return Asked("mount", params)


def secret(sentence: Sentence, at: int) -> Asked:
    sentence.take(*range(len(sentence.low)))  # its values must go nowhere, not even a subject
    return Asked(
        "secret",
        kind="Secret",
        problem="I do not make Secrets from values typed in a conversation, which keeps them "
        "in its history. Create it yourself (`kubectl create secret generic NAME "
        "--from-literal=KEY=VALUE -n NAMESPACE`), then ask me to use it ('mount secret NAME "
        "into web at /etc/creds', 'load secret NAME into web's env')",
    )


READERS: dict[str, Reader] = {
    "secret": secret,
    "create": create,
    "configmap": configmap,
    "storage": storage,
    "claim": claim,
    "mount": mount,
}
