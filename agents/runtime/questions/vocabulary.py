"""The vocabulary questions are read by: kinds, measures, checks, states, verbs and cue words,
each with the synonyms people use.

Tables, not logic: `reading` decides what a question asks from which of these its words hold
(looked up with `words.lookup`, which tolerates plurals and a slip in a longer noun).

Must not know: the cluster, the servers, any agent.
"""

from __future__ import annotations


def _each(text: str, meaning: str) -> dict[str, str]:
    return dict.fromkeys(text.split(), meaning)


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A resource word people use -> the resource the tools take ("workloads": the three below).
KINDS = {
    **_each("pod pods po replica replicas", "pods"),
    **_each("deployment deployments deploy deploys", "deployments"),
    **_each("statefulset statefulsets sts", "statefulsets"),
    **_each("daemonset daemonsets ds", "daemonsets"),
    **_each("replicaset replicasets rs", "replicasets"),
    **_each("job jobs", "jobs"),
    **_each("cronjob cronjobs cj", "cronjobs"),
    **_each("service services svc svcs", "services"),
    **_each("ingress ingresses ing", "ingresses"),
    **_each("configmap configmaps cm", "configmaps"),
    **_each("secret secrets", "secrets"),
    **_each("pvc pvcs persistentvolumeclaim persistentvolumeclaims claim claims", "pvcs"),
    **_each("namespaces", "namespaces"),
    **_each("node nodes", "nodes"),
    **_each("hpa hpas autoscaler autoscalers", "hpa"),
    **_each("pdb pdbs poddisruptionbudget poddisruptionbudgets", "pdb"),
    **_each("networkpolicy networkpolicies netpol netpols", "networkpolicies"),
    **_each("serviceaccount serviceaccounts", "serviceaccounts"),
    **_each("role roles", "roles"),
    **_each("rolebinding rolebindings", "rolebindings"),
    **_each("quota quotas resourcequota resourcequotas", "quotas"),
    **_each("limitrange limitranges ranges", "limitranges"),  # "limit ranges"
    **_each("workload workloads app apps application applications", "workloads"),
    **_each("container containers", "containers"),
    **_each("event events", "events"),
}
WORKLOADS = ("deployments", "statefulsets", "daemonsets")
METRICS = {**_each("cpu cpus processor core cores", "cpu"), **_each("memory mem ram", "memory")}
IMAGES = _set("image images tag tags")
# What a workload may lack (or do) -> the check that finds it.
CHECKS = {
    **_each("limit limits", "limits"),
    **_each("request requests reservation reservations", "requests"),
    **_each("probe probes healthcheck healthchecks health-check health-checks", "probes"),
    **_each("readiness readinessprobe", "readiness"),
    **_each("liveness livenessprobe", "liveness"),
    **_each("startup startupprobe", "startup"),
    **_each("pdb pdbs poddisruptionbudget poddisruptionbudgets budget budgets", "pdb"),
}
NEGATIONS = _set("no without missing lack lacks lacking lacked none zero not unset undefined")
STATES = {
    **_each("running", "running"),
    **_each("pending scheduling unscheduled", "pending"),
    **_each("failed failing errored error", "failed"),
    **_each("succeeded completed complete finished done", "succeeded"),
    **_each("ready", "ready"),
    **_each("unready notready unhealthy broken", "not-ready"),
    **_each("crashing crashlooping crashloop crashloopbackoff", "crashing"),
}
RANKING = _set(
    "most top biggest heaviest hungriest highest largest greediest hog hogs hogging busiest "
    "sorted sort ranked rank by consuming consume consumes using use uses eating eat eats"
)
FEWEST = _set("least fewest lowest smallest emptiest idlest idle quietest")
COUNTING = _set("many count number total")
RESTARTS = _set("restarts restarted restarting restart crashes crashed")

# Capacity cues, by what they ask.
PRESSURE = _set(
    "pressure pressured pressures unhealthy problems problem conditions condition cordoned "
    "unschedulable sick notready unready degraded"
)
FREE = _set("free spare left headroom room available space remaining unused unallocated")
FULLNESS = _set(
    "full fullness capacity utilization utilisation utilized utilised allocatable allocated "
    "overcommitted overcommit overcommitment usage load loaded saturated"
)
NODE_WORDS = _set("node nodes cluster machine machines host hosts")

# History cues.
HISTORY = _set(
    "changed changes happened happen happening history recent recently lately timeline modified "
    "updated edited deployed touched rollouts revisions revision occurred went"
)
PAST_CHANGES = _set(
    "changed modified deployed edited updated deleted scaled restarted created touched rolled "
    "removed patched applied"
)
ROLLOUT = _set("rollout rollouts revision revisions rollout-history")

# Access: a verb people use -> (the Kubernetes verb, the subresource it acts through).
ACCESS_VERBS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(_set("read see view get look fetch access open tail"), ("get", "")),
    "list": ("list", ""), "watch": ("watch", ""),
    **dict.fromkeys(_set("create make add deploy launch run"), ("create", "")),
    **dict.fromkeys(_set("delete remove kill destroy erase"), ("delete", "")),
    **dict.fromkeys(_set("edit change modify write alter patch label annotate"), ("patch", "")),
    **dict.fromkeys(_set("update replace"), ("update", "")),
    **dict.fromkeys(_set("scale resize"), ("patch", "scale")),
    "restart": ("patch", ""),
    **dict.fromkeys(_set("exec shell ssh"), ("create", "exec")),
    **dict.fromkeys(_set("port-forward portforward forward"), ("create", "portforward")),
    "attach": ("create", "attach"),
    **dict.fromkeys(_set("evict drain"), ("create", "eviction")),
    **{verb: (verb, "") for verb in _set("impersonate approve bind escalate")},
}  # fmt: skip
PERMISSION_WORDS = _set(
    "permissions permission rights right privileges privilege access roles allowed permitted "
    "able authorized authorised entitled"
)
LOG_WORDS = _set("log logs")

# Policy: a verb people use -> the policy store's action type.
ACTIONS = {
    **_each("scale scaling scaled rescale", "scale"),
    **_each("delete deleting deleted remove removing kill killing destroy destroying", "delete"),
    **_each("restart restarting bounce bouncing recycle recycling redeploy redeploying", "restart"),
    **_each("rollback rolling-back revert reverting undo undoing", "rollback"),
    **_each("drain draining", "drain"),
    **_each("cordon cordoning", "cordon"),
    **_each("uncordon uncordoning", "uncordon"),
    **_each("evict evicting", "evict"),
    **_each("resize resizing right-size right-sizing rightsize rightsizing", "resize"),
    **_each(
        "patch patching edit editing modify modifying update updating label labelling", "patch"
    ),
    **_each("apply applying", "apply"),
}
STOPPING = _set("stop stopping shutdown")  # "shut down", "take down", "turn off": scale to 0

# Verbs that open a command, never a question: the text is left to the agent's other intents.
COMMANDS = _set(
    "scale restart delete remove fix heal repair deploy ship promote rollback roll revert undo "
    "set change update upgrade downgrade add create make give bump increase decrease raise lower "
    "reduce drain cordon uncordon taint untaint label annotate unlabel patch apply edit expose run "
    "start stop kill pause resume enable disable allow deny block move rename resize right-size "
    "rightsize harden probe diagnose debug investigate troubleshoot reconcile sync bounce recycle "
    "redeploy evict put attach mount open close approve merge take bring spin shut turn switch "
    "double halve triple cap install uninstall reboot kick reload destroy isolate grant revoke "
    "let assign bind protect spread schedule unschedule rotate enforce audit autoscale tolerate "
    "pin suspend unsuspend point route limit"
)
# Words of a diagnosis ("what's wrong with web", "is checkout broken"): the agents' own
# investigation answers those, with evidence of the cause, not an inventory.
DIAGNOSIS = _set(
    "wrong broken failing fail fails failed crashing crash crashes erroring errors error "
    "dead dying stuck"
)
PEOPLE_SELF = _set("i me we us myself ourselves")
AGENT_WORDS = _set("agent agents bot")
SUBJECT_NOUNS = {
    **_each("group team-group", "group"),
    **_each("serviceaccount sa", "serviceaccount"),
    **_each("user person", "user"),
}
