"""The grammar reads requests as people type them: the operation, its parameters and the words
that name the object, whatever the phrasing (terse, chatty, kubectl-like, with a typo in the
name); questions and requests with no change in them read as none."""

from __future__ import annotations

from typing import Any

import pytest

from agents.runtime import requests
from agents.runtime.changes import words


def _has(got: Any, want: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and _has(got[k], v) for k, v in want.items())
    return bool(got == want)


READS = [
    # workloads
    ("scale web to 3", "scale", {"replicas": 3}, ("web",), None),
    ("scale web down to a single replica", "scale", {"replicas": 1}, ("web",), None),
    ("scale web to a pair of replicas", "scale", {"replicas": 2}, ("web",), None),
    (
        "could you please bump the web deployment up to 4 replicas?",
        "scale",
        {"replicas": 4},
        ("web",),
        None,
    ),
    (
        "Scale up the replicas of deployment 'web-app' in namespace 'scale-test' by 100%",
        "scale",
        {"factor": 2.0},
        ("web-app",),
        "scale-test",
    ),
    (
        "Scale down the replicas of deployment web-service in namespace scale-down-test by 50%",
        "scale",
        {"factor": 0.5},
        ("web-service",),
        "scale-down-test",
    ),
    ("kubectl scale deploy api --replicas=5 -n shop", "scale", {"replicas": 5}, ("api",), "shop"),
    (
        "Update the image of the web-app in rollout-test namespace to 1.22 version",
        "image",
        {"tag": "1.22"},
        ("web-app",),
        "rollout-test",
    ),
    ("set the image of wbe to nginx:1.26", "image", {"image": "nginx:1.26"}, ("wbe",), None),
    ("upgrade web to nginx:1.28", "image", {"image": "nginx:1.28"}, ("web",), None),
    ("upgrade api to 2.1 in shop", "image", {"tag": "2.1"}, ("api",), "shop"),
    ("pause the rollout of api in shop", "pause", {}, ("api",), "shop"),
    ("suspend the backup cronjob", "pause", {}, ("backup",), None),
    ("give the api half a CPU in shop", "resources", {"cpu": "500m"}, ("api",), "shop"),
    # probes, placement
    (
        "add a readiness probe to web on /healthz port 8080",
        "probe",
        {"probes": ["readiness"], "path": "/healthz", "port": 8080, "handler": "http"},
        ("web",),
        None,
    ),
    (
        "please give api a liveness probe hitting /live every 5s after 10 seconds",
        "probe",
        {"probes": ["liveness"], "path": "/live", "period": 5, "initial_delay": 10},
        ("api",),
        None,
    ),
    (
        "remove the startup probe from worker in shop",
        "probe",
        {"probes": ["startup"], "remove": True},
        ("worker",),
        "shop",
    ),
    (
        "add a tcp readiness check on port 6379 to redis",
        "probe",
        {"handler": "tcp", "port": 6379},
        ("redis",),
        None,
    ),
    (
        "run web only on nodes with disktype=ssd",
        "node_selector",
        {"values": {"disktype": "ssd"}},
        ("web",),
        None,
    ),
    (
        "pin the api to node-2",
        "node_selector",
        {"values": {"kubernetes.io/hostname": "node-2"}},
        ("api",),
        None,
    ),
    ("remove the node selector from web", "node_selector", {"clear": True}, ("web",), None),
    (
        "let web tolerate dedicated=gpu:NoSchedule",
        "tolerate",
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        ("web",),
        None,
    ),
    ("make the trainer tolerate the gpu taint", "tolerate", {"hint": ["gpu"]}, ("trainer",), None),
    (
        "spread web across zones",
        "spread",
        {"topology": "topology.kubernetes.io/zone"},
        ("web",),
        None,
    ),
    (
        "make sure the api pods land on different nodes",
        "spread",
        {"topology": "kubernetes.io/hostname"},
        ("api",),
        None,
    ),
    # networking
    ("expose web on port 80", "expose", {"port": 80}, ("web",), None),
    (
        "kubectl expose deployment api --port=80 --target-port=8080 --type=NodePort -n shop",
        "expose",
        {"port": 80, "target_port": 8080, "type": "NodePort"},
        ("api",),
        "shop",
    ),
    (
        "could you create a service for the worker on port 9000",
        "expose",
        {"port": 9000},
        ("worker",),
        None,
    ),
    (
        "set the selector of service front to app=web",
        "service",
        {"selector": {"app": "web"}},
        ("front",),
        None,
    ),
    (
        "point the checkout service at the green deployment",
        "service",
        {"to": ["green"]},
        ("checkout",),
        None,
    ),
    (
        "Can you switch all live traffic over to the green version now?",
        "service",
        {"to": ["green"]},
        (),
        None,
    ),
    (
        "set the target port of service api to 8080",
        "service",
        {"target_port": 8080},
        ("api",),
        None,
    ),
    (
        "only web may reach api in shop",
        "netpol",
        {"direction": "ingress", "target": ["api"], "peers": [{"word": "web"}]},
        (),
        "shop",
    ),
    (
        "only the frontend should be able to talk to the api in shop",
        "netpol",
        {"direction": "ingress", "target": ["api"], "peers": [{"word": "frontend"}]},
        (),
        "shop",
    ),
    (
        "the api should only be reachable from the frontend and the worker",
        "netpol",
        {
            "direction": "ingress",
            "target": ["api"],
            "peers": [{"word": "frontend"}, {"word": "worker"}],
        },
        (),
        None,
    ),
    (
        "web may only talk to db in shop",
        "netpol",
        {"direction": "egress", "target": ["web"], "peers": [{"word": "db"}]},
        (),
        "shop",
    ),
    ("deny all ingress in shop", "netpol", {"deny": True, "direction": "ingress"}, (), "shop"),
    (
        "block all incoming traffic to api except from frontend",
        "netpol",
        {"target": ["api"], "peers": [{"word": "frontend"}]},
        (),
        None,
    ),
    (
        "allow egress from web only to DNS and the db",
        "netpol",
        {"direction": "egress", "target": ["web"], "peers": [{"dns": True}, {"word": "db"}]},
        (),
        None,
    ),
    (
        "Create a NetworkPolicy named 'np' in namespace 'ns1' that: 1. Allows egress traffic only "
        "to pods in namespace 'ns2' (incoming traffic not affected) 2. Allows DNS traffic (port 53 "
        "TCP and UDP) 3. Blocks all other outgoing traffic",
        "netpol",
        {"name": "np", "direction": "egress", "peers": [{"namespace": "ns2"}, {"dns": True}]},
        (),
        "ns1",
    ),
    (
        "create an ingress for web at shop.example.com/",
        "ingress",
        {"host": "shop.example.com", "path": "/"},
        ("web",),
        None,
    ),
    (
        "Please create route for routing traffic from path '/app' to service 'web-service' in "
        "namespace 'ingress-test'.",
        "ingress",
        {"path": "/app", "service": "web-service"},
        (),
        "ingress-test",
    ),
    # guards
    ("add a pdb to web with min available 2", "pdb", {"min_available": 2}, ("web",), None),
    (
        "make sure at least 2 api pods stay up during maintenance",
        "pdb",
        {"min_available": 2},
        ("api",),
        None,
    ),
    (
        "checkout may lose at most one pod at a time",
        "pdb",
        {"max_unavailable": 1},
        ("checkout",),
        None,
    ),
    (
        "autoscale web between 2 and 10 at 70% cpu",
        "autoscale",
        {"min": 2, "max": 10, "cpu": 70},
        ("web",),
        None,
    ),
    (
        "Create a HorizontalPodAutoscaler for deployment 'web-app' in namespace 'hpa-test' "
        "targeting 50% CPU utilization with min=1 and max=3 replicas",
        "autoscale",
        {"min": 1, "max": 3, "cpu": 50},
        ("web-app",),
        "hpa-test",
    ),
    (
        "kubectl autoscale deploy api --min=2 --max=5 --cpu-percent=80",
        "autoscale",
        {"min": 2, "max": 5, "cpu": 80},
        ("api",),
        None,
    ),
    # tenancy
    (
        "create namespace team-a with a quota of 4 cpus, 8Gi memory and 20 pods",
        "namespace",
        {"name": "team-a", "quota": {"pods": "20", "requests.cpu": "4", "requests.memory": "8Gi"}},
        (),
        "team-a",
    ),
    ("set a quota of 10 pods on shop", "quota", {"hard": {"pods": "10"}}, (), "shop"),
    (
        "set default limits in staging to 500m cpu and 512Mi memory",
        "limitrange",
        {"limits": {"default": {"cpu": "500m", "memory": "512Mi"}}},
        (),
        "staging",
    ),
    ("enforce restricted pod security in shop", "podsecurity", {"level": "restricted"}, (), "shop"),
    (
        "let carol read logs in shop",
        "grant",
        {"subject": {"kind": "User", "name": "carol"}},
        (),
        "shop",
    ),
    (
        "give bob edit access to staging",
        "grant",
        {"subject": {"name": "bob"}, "role": "edit"},
        (),
        "staging",
    ),
    (
        "Create a read-only role for pods bound to my reader-sa service account in the "
        "create-simple-rbac namespace.",
        "grant",
        {
            "subject": {"kind": "ServiceAccount", "name": "reader-sa"},
            "rules": [{"verbs": ["get", "list", "watch"], "resources": ["pods"]}],
        },
        (),
        "create-simple-rbac",
    ),
    ("revoke carol's access to shop", "revoke", {"subject": {"name": "carol"}}, (), "shop"),
    # new things
    (
        "run redis:7 as cache with 2 replicas in staging",
        "create",
        {"kind": "Deployment", "image": "redis:7", "name": "cache", "replicas": 2},
        (),
        "staging",
    ),
    (
        "Please create a nginx pod named web-server in the create-pod-test namespace",
        "create",
        {"kind": "Pod", "image": "nginx", "name": "web-server"},
        (),
        "create-pod-test",
    ),
    (
        "create deployment web --image=nginx:1.27 --replicas=2 -n shop",
        "create",
        {"image": "nginx:1.27", "name": "web", "replicas": 2},
        (),
        "shop",
    ),
    (
        "a job that runs `python report.py` every night at 2",
        "create",
        {
            "kind": "CronJob",
            "schedule": "0 2 * * *",
            "command": ["python", "report.py"],
            "name": "report",
        },
        (),
        None,
    ),
    (
        "Create a Kubernetes CronJob named 'data-backup' in the 'create-cronjob-test' namespace "
        "that runs every day at midnight. The job should run a busybox container that executes a "
        "simple command to echo 'Backup completed' and then sleep for 5 seconds.",
        "create",
        {
            "kind": "CronJob",
            "schedule": "0 0 * * *",
            "image": "busybox",
            "name": "data-backup",
            "command": ["sh", "-c", "echo 'Backup completed'; sleep 5"],
        },
        (),
        "create-cronjob-test",
    ),
    (
        "create a configmap app-config with LOG_LEVEL=debug and MODE=fast in shop",
        "configmap",
        {"name": "app-config", "data": {"LOG_LEVEL": "debug", "MODE": "fast"}},
        (),
        "shop",
    ),
    (  # a name said after "called" is the name, though "limits" is also a resources word
        "make a configmap called limits in payments with max_items=50",
        "configmap",
        {"name": "limits", "data": {"max_items": "50"}, "create": True},
        (),
        "payments",
    ),
    (
        "put a configmap named feature-flags in shop with checkout=on",
        "configmap",
        {"name": "feature-flags", "data": {"checkout": "on"}, "create": True},
        (),
        "shop",
    ),
    (
        "mount configmap settings into api at /etc/settings",
        "mount",
        {"source": {"kind": "ConfigMap", "name": "settings"}, "path": "/etc/settings"},
        ("api",),
        None,
    ),
    ("resize the data pvc to 15Gi", "storage", {"size": "15Gi"}, ("data",), None),
    # nodes
    ("drain node-2", "drain", {}, ("node-2",), None),
    (
        "taint node-1 dedicated=gpu:NoSchedule",
        "taint",
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        ("node-1",),
        None,
    ),
    ("remove the dedicated taint from node-1", "untaint", {"key": "dedicated"}, ("node-1",), None),
    ("label node-2 disktype=ssd", "labels", {"values": {"disktype": "ssd"}}, ("node-2",), None),
    (
        "create a deployment called echo with image nginx:1.27 and 2 replicas in qa",
        "create",
        {"kind": "Deployment", "name": "echo", "image": "nginx:1.27", "replicas": 2},
        (),
        "qa",
    ),
    (
        "run busybox as a job in qa that says Hello World and then sleeps 5 seconds",
        "create",
        {
            "kind": "Job",
            "name": "echo-job",
            "image": "busybox",
            "command": ["sh", "-c", "echo 'Hello World'; sleep 5"],
        },
        (),
        "qa",
    ),
    (
        "create a cronjob with busybox that prints the date every 5 minutes",
        "create",
        {"kind": "CronJob", "schedule": "*/5 * * * *", "command": ["date"]},
        (),
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "op", "params", "subject", "namespace"), READS, ids=[r[0][:60] for r in READS]
)
def test_a_request_reads_as_its_change(
    text: str, op: str, params: dict[str, Any], subject: tuple[str, ...], namespace: str | None
) -> None:
    asked = words.read(text)
    assert asked is not None, text
    assert asked.op == op
    assert not asked.problem, asked.problem
    assert _has(asked.params, params), asked.params
    assert asked.subject == subject
    assert asked.namespace == namespace


NOT_CHANGES = [
    "why is web failing?",
    "is web healthy?",
    "what's wrong with the rollout of api?",
    "which pods use the most memory in shop?",
    "who can delete pods in shop?",
    "fix web",
    "Please fix the health check issue with the deployment named 'webapp' in namespace "
    "'health-check'",
    "probe web",
    "has web drifted from git?",
    "rollout",
    # the cluster's version is the Cluster Operator's, never a workload's image
    "upgrade the cluster to 1.38",
    "check upgrade readiness for v1.38",
    "prepare the 1.38 upgrade",
    "plan maintenance of node-3 for a kernel upgrade",
    "upgrade the kubelets",
]


@pytest.mark.parametrize("text", NOT_CHANGES)
def test_questions_and_other_work_are_no_change(text: str) -> None:
    assert words.read(text) is None


IMPRECISE = [
    "scale web",
    "set web's memory to lots",
    "taint node-1",
    "give carol access",
    "create a deployment called api",
]


@pytest.mark.parametrize("text", IMPRECISE)
def test_an_imprecise_change_says_what_is_missing(text: str) -> None:
    asked = words.read(text)
    assert asked is not None
    assert asked.problem


def test_a_name_that_is_a_filler_word_is_kept_after_named() -> None:
    asked = words.read("scale the deployment named app to 3")
    assert asked is not None and asked.subject == ("app",)


CONTEXT_FIRST = [
    ("node-3 is due for a kernel upgrade, can you drain it for me?", "drain", {}, "Node", None),
    ("bob joined the staging team today, can you give him edit rights there?", "grant",
     {"subject": {"kind": "User", "name": "bob"}, "role": "edit"}, "", "staging"),
    ("carol moved to another team, could you please take away her access to staging?", "revoke",
     {"subject": {"name": "carol"}}, "", "staging"),
    ("carol is on call this week, could she get read access to the pod logs in staging?",
     "grant", {"subject": {"name": "carol"}}, "", "staging"),
    ("could you lock api down so that nothing but web can connect to it?", "netpol",
     {"target": ["api"], "peers": [{"word": "web"}], "direction": "ingress"}, "", None),
    ("we're retiring /livez: could you point web's liveness probe at /healthz instead?", "probe",
     {"probes": ["liveness"], "path": "/healthz"}, "", None),
    ("nothing reads MODE anymore, please delete it from the app-config configmap in staging",
     "configmap", {"data": {"MODE": None}, "name": "app-config"}, "ConfigMap", "staging"),
    ("web has to be reachable from outside the cluster: could you create a NodePort service "
     "web-np for it on port 9090?", "expose", {"name": "web-np", "port": 9090,
                                               "type": "NodePort"}, "", None),
    ("a new team starts on monday: could you create a team-a namespace for them, capped at 4 "
     "cpus, 8Gi of memory and 20 pods?", "namespace",
     {"name": "team-a", "quota": {"pods": "20", "requests.cpu": "4",
                                  "requests.memory": "8Gi"}}, "Namespace", "team-a"),
    ("could you spin up redis:7 in staging for us? call it cache, two replicas please", "create",
     {"image": "redis:7", "name": "cache", "replicas": 2}, "Deployment", "staging"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "op", "params", "kind", "namespace"), CONTEXT_FIRST,
                         ids=[c[0][:50] for c in CONTEXT_FIRST])  # fmt: skip
def test_a_request_said_after_its_context_is_read_as_the_request(
    text: str, op: str, params: dict[str, Any], kind: str, namespace: str | None
) -> None:
    asked = requests.read(text)
    assert isinstance(asked, words.Asked), (text, asked)
    assert asked.op == op and not asked.problem, asked
    assert _has(asked.params, params), asked.params
    assert not kind or asked.kind == kind
    assert asked.namespace == namespace


@pytest.mark.parametrize(
    "text",
    ["should web have a pdb?", "can you tell me who can delete pods in shop?",
     "can the dev team restart api in shop?", "may I scale web to 1?",
     "which workloads have no limits in staging?", "can carol read logs in staging?"],
)  # fmt: skip
def test_a_question_that_names_a_change_is_never_the_change(text: str) -> None:
    assert not isinstance(requests.read(text), words.Asked), text


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("scale the workers pool to 5", {"replicas": 5}),
        ("add 2 nodes to the workers pool", {"by": 2}),
        ("remove a node from the workers pool", {"by": -1}),
        ("scale md/workers --replicas=3", {"replicas": 3}),
        ("double the workers node pool", {"factor": 2.0}),
        ("please grow the workers pool to 3 machines", {"replicas": 3}),
        ("shrink the workers pool to 1 node", {"replicas": 1}),
        ("expand the workers pool by 2 nodes", {"by": 2}),
    ],
)
def test_a_node_pool_is_sized_in_nodes(text: str, params: dict[str, Any]) -> None:
    asked = words.read(text)
    assert asked is not None and asked.op == "scale", asked
    assert asked.kind == "MachineDeployment" and asked.subject == ("workers",), asked
    assert asked.params == params
