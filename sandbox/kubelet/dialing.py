"""The cluster network as one pod sees it: cluster DNS, kube-proxy's Service routing, and what
answers on a pod's ports, for the network tools a container runs (`nettools.Network`).

DNS follows a pod's resolv.conf (`search <ns>.svc.cluster.local svc.cluster.local
cluster.local`, ndots 5): `web`, `web.shop`, `web.shop.svc` and `web.shop.svc.cluster.local`
all name Service web of namespace shop, a short name meaning the pod's own namespace. A Service
resolves to its clusterIP (a headless one to its first ready endpoint; ExternalName names
outside the sandbox do not resolve). A connection to a clusterIP goes, as kube-proxy sends it,
from the Service port to the same-named port of the Service's Endpoints, to the first ready
address: none ready is kube-proxy's REJECT (refused); a port the Service does not have is
dropped (unreachable). A pod IP, or localhost, reaches that pod: a container that is running
and past its app's startup, whose profile (or `python -m http.server`) listens on the port,
answers with the profile's paths and latency; otherwise the kernel refuses. Answers are read
at the moment of the call from the store and the kubelet's own container records; nothing is
written. Addresses are picked deterministically (first in IP order), not at random.
"""

from __future__ import annotations

from sandbox.kubelet.commands import interpret
from sandbox.kubelet.nettools import Dial, Listener
from sandbox.kubelet.worker import PodWorker
from sandbox.store import Key, Obj

SERVICES: Key = ("", "services")
ENDPOINTS: Key = ("", "endpoints")
PODS: Key = ("", "pods")
DOMAIN = "cluster.local"
LOOPBACK = "127.0.0.1"
FAILING_APP = 0.5  # an error rate from which every request is answered 500


class ClusterNetwork:
    """`nettools.Network` for the containers of `pod`, answered from the kubelet's view."""

    def __init__(self, kubelet: PodWorker, pod: Obj) -> None:
        self.kubelet = kubelet
        self.pod = pod
        self.namespace = str(pod["metadata"]["namespace"])

    # -- DNS ------------------------------------------------------------------------------------

    def resolve(self, host: str) -> str | None:
        found = self.lookup(host)
        return found[1] if found is not None else None

    def lookup(self, host: str) -> tuple[str, str] | None:
        """(the name that answered, its address): what `nslookup` and `getent` print."""
        name = host.lower().rstrip(".")
        if _is_ip(name):
            return name, name
        if name == "localhost":
            return name, LOOPBACK
        for candidate in self._search(name):
            service = self._service_named(candidate)
            if service is not None:
                address = self._address_of(service)
                return (candidate, address) if address is not None else None
        return None

    def _search(self, name: str) -> list[str]:
        fqdns = [f"{name}.{self.namespace}.svc.{DOMAIN}", f"{name}.svc.{DOMAIN}"]
        fqdns += [f"{name}.{DOMAIN}", name]
        return fqdns if name.count(".") < 5 else [name, *fqdns[:-1]]

    def _service_named(self, fqdn: str) -> Obj | None:
        suffix = f".svc.{DOMAIN}"
        if not fqdn.endswith(suffix):
            return None
        parts = fqdn[: -len(suffix)].split(".")
        if len(parts) != 2:
            return None
        return self.kubelet.get(SERVICES, parts[1], parts[0])

    def _address_of(self, service: Obj) -> str | None:
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return None
        address = str(spec.get("clusterIP") or "")
        if address and address != "None":
            return address
        ready = self._ready_addresses(service)
        return ready[0][0] if ready else None

    # -- connections ----------------------------------------------------------------------------

    def connect(self, address: str, port: int) -> Dial:
        if address == LOOPBACK:
            return self._pod_port(self.pod, port)
        service = self._service_at(address)
        if service is not None:
            return self._through(service, port)
        pod = self._pod_at(address)
        if pod is None:
            return "unreachable"
        return self._pod_port(pod, port)

    def _service_at(self, address: str) -> Obj | None:
        for service in self.kubelet.list(SERVICES):
            if (service.get("spec") or {}).get("clusterIP") == address:
                return service
        return None

    def _through(self, service: Obj, port: int) -> Dial:
        ports = (service.get("spec") or {}).get("ports") or []
        chosen = next((p for p in ports if int(p.get("port") or 0) == port), None)
        if chosen is None:
            return "unreachable"  # no kube-proxy rule for this port: packets are dropped
        ready = self._ready_addresses(service, str(chosen.get("name") or ""))
        if not ready:
            return "refused"  # kube-proxy rejects connections to a Service with no endpoint
        address, target = ready[0]
        pod = self._pod_at(address)
        return "unreachable" if pod is None else self._pod_port(pod, target)

    def _ready_addresses(self, service: Obj, port_name: str | None = None) -> list[tuple[str, int]]:
        """(pod IP, port number) of the Service's ready endpoints for the named Service port (any
        port when None), in IP order."""
        meta = service["metadata"]
        endpoints = self.kubelet.get(ENDPOINTS, meta["namespace"], meta["name"]) or {}
        found: list[tuple[str, int]] = []
        for subset in endpoints.get("subsets") or ():
            numbers = [
                int(p.get("port") or 0)
                for p in subset.get("ports") or ()
                if port_name is None or str(p.get("name") or "") == port_name
            ]
            if not numbers and port_name is not None:
                continue
            for entry in subset.get("addresses") or ():
                found.append((str(entry.get("ip") or ""), numbers[0] if numbers else 0))
        return sorted(found, key=lambda f: tuple(int(x) for x in f[0].split(".") if x.isdigit()))

    def _pod_at(self, address: str) -> Obj | None:
        for (namespace, name), runtime in self.kubelet.pods.items():
            if runtime.pod_ip == address:
                return self.kubelet.get(PODS, namespace, name)
        return None

    def _pod_port(self, pod: Obj, port: int) -> Dial:
        meta = pod["metadata"]
        runtime = self.kubelet.pods.get((meta["namespace"], meta["name"]))
        if runtime is None:
            return "unreachable"
        now = self.kubelet.now()
        book = self.kubelet.ctx.world.profiles
        for container in (pod.get("spec") or {}).get("containers") or ():
            run = runtime.runs.get(container["name"])
            if run is None or run.phase != "running":
                continue
            plan = run.plan if run.plan is not None else interpret(container)
            profile = book.profile_for(pod, container)
            own = plan.own_process and profile.serves(port)
            if own and now - run.started_at >= profile.startup_seconds - 1e-9:
                return _listener(profile.http_paths, profile.latency_ms, profile.error_rate)
            if port in plan.ports:
                return Listener(frozenset({"/"}))
        return "refused"


def _listener(paths: tuple[str, ...], latency_ms: float, error_rate: float) -> Listener:
    status = 500 if error_rate >= FAILING_APP else 0
    return Listener(frozenset(paths), http=bool(paths), latency=latency_ms / 1000, status=status)


def _is_ip(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)
