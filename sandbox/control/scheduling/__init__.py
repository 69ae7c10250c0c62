"""The parts of the default-scheduler that `sandbox.control.scheduler` puts together.

    requests.py        what a pod asks of a node: effective requests, scoring requests, and
                       the declared features it requires (sandbox/kubelet/features.py)
    cache.py           nodes as the scheduler sees them, and what the pods placed on them use
    affinity.py        nodeSelector, node affinity terms, the pod (anti-)affinity verdict
    interpod.py        topology domains of the pods already placed, for inter-pod affinity
    volumebinding.py   what a pod's PersistentVolumeClaims allow: wait, fail, pin to nodes
    filters.py         why a node cannot take a pod, and the FailedScheduling message
    scoring.py         which feasible nodes score best

Each part reads the store only through the controller it is handed and writes nothing: binding,
events and conditions stay with the controller.
"""
