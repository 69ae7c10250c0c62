"""Which replica works: leader election on a `coordination.k8s.io/v1` Lease.

Every long-lived part of the crew runs as two or more replicas (deploy/base). The holder of the
part's Lease in the crew's namespace does the work; the others wait to take over. The rules and
the timings are client-go's leader election (kube-controller-manager's `--leader-elect-*`):

    lease duration  15 s  a holder that stops renewing loses the Lease this long after it last
                          renewed it
    renew deadline  10 s  the holder stops working when it could not renew for this long
    retry period     2 s  how often the holder renews and a candidate tries (a candidate adds up
                          to 20% jitter, so replicas started together do not march in step)

A candidate judges expiry by observation, as client-go does: it notes on its own monotonic clock
when it last saw the Lease's record change, and takes the Lease only once the lease duration has
passed since without a change. The stamps in the record (`renewTime`, `acquireTime`) are for
people (`kubectl describe lease`) and never compared with this machine's clock: the sandbox's
runs faster than life, and a real node's drifts. Every write is an update carrying the record's
resourceVersion, so two replicas never both win one term: the API server refuses the second.

Fencing: the holder counts itself leading only until the renew deadline has passed since its last
successful renewal (`Leadership.leading`, counted from when that request was sent), and the work
runs under `fenced`, which cancels it as soon as that lapses: whatever the network or the API
server do, it has stopped at least lease duration - renew deadline (5 s) before any other
replica can take the Lease. A replica that lost the Lease goes back to waiting for it.

The holder's status is the gauge `kubecrew_leader{lease}` on `/metrics` (`core.telemetry`), set
after every try: 1 while leading.

Release: a holder that stops cleanly (Ctrl-C, SIGTERM) empties the holder and sets a lease of 1 s,
so a waiting replica takes over at its next try rather than after the lease duration. One that is
killed (`kill -9`, a lost node) is taken over one lease duration, plus a try, after its last
renewal.

The Lease also carries the part's memory of its schedule (`stamp`, `stamps`: annotations
`kubecrew.io/<key>`): `kubecrew run` stamps when each job last started, so the replica that takes
over does not run again what its predecessor ran within the period.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
import typer

from core import telemetry
from core.errors import Conflict, NotFound, ToolError
from kubecrew.health import Check

if TYPE_CHECKING:  # the Kubernetes client is imported by a part that elects, when it elects
    from core.connection import Api, Json

T = TypeVar("T")
Say = Callable[[str], None]

NAMESPACE_ENV = "KUBECREW_NAMESPACE"
DEFAULT_NAMESPACE = "kubecrew-system"
POD_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
STAMP_PREFIX = "kubecrew.io/"
FENCE_CHECK_S = 0.2  # how often the fence looks at the holder's deadline
JITTER = 0.2  # a candidate waits retry period * (1 + up to this) between tries
RELEASED_LEASE_S = 1  # the lease duration written on release, as client-go does


class LeaseError(Exception):
    """The Lease cannot be taken part in (the identity may not read or write it): one line."""


@dataclass(frozen=True)
class Timings:
    lease_s: float = 15.0
    renew_s: float = 10.0
    retry_s: float = 2.0

    def __post_init__(self) -> None:
        if not self.lease_s > self.renew_s:
            raise ValueError("the lease duration must be longer than the renew deadline")
        if not self.renew_s > self.retry_s * (1 + JITTER):
            raise ValueError("the renew deadline must be longer than the retry period (+20%)")


def default_identity() -> str:
    """The pod's name (a host name) and a random part, as client-go's callers make it: unique per
    process, readable in `kubectl get lease`."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:12]}"


def crew_namespace(environ: Mapping[str, str] = os.environ) -> str:
    """$KUBECREW_NAMESPACE, else the pod's own namespace, else kubecrew-system."""
    if environ.get(NAMESPACE_ENV):
        return environ[NAMESPACE_ENV]
    try:
        return POD_NAMESPACE_FILE.read_text().strip() or DEFAULT_NAMESPACE
    except OSError:
        return DEFAULT_NAMESPACE


class Leadership:
    """One replica's part in the election of `name`, run in a thread of its own (`start`)."""

    def __init__(
        self,
        api: Api,
        namespace: str,
        name: str,
        *,
        identity: str | None = None,
        timings: Timings | None = None,
        say: Say | None = None,
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.timings = timings or Timings()
        self._say = say or (lambda _line: None)
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._seen: tuple[object, ...] | None = None  # the record as last seen
        self._seen_at = 0.0  # monotonic time it last changed
        self._annotations: dict[str, str] = {}
        self._renewed_at: float | None = None  # when our last successful write was sent
        self._problem = ""  # the last failure said, so a failing API is said once
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one request at a time: the thread's, or a stamp

    @property
    def lease(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def leading(self) -> bool:
        """Holding the Lease, and within the renew deadline of the last renewal."""
        renewed = self._renewed_at
        return renewed is not None and time.monotonic() - renewed < self.timings.renew_s

    @property
    def holder(self) -> str:
        """Who held the Lease when it was last read ("" when nobody)."""
        return str(self._seen[0]) if self._seen else ""

    # -- the election's thread ---------------------------------------------------------------

    def start(self) -> Leadership:
        """Take part: one try now, so a Lease this identity may not use fails here in one line
        (`LeaseError`), then the thread that tries and renews every retry period."""
        try:
            self._try()
        except ToolError as exc:
            message = f"cannot take part in the election of Lease {self.lease}: {exc.message}"
            raise LeaseError(message) from exc
        self._thread = threading.Thread(target=self._loop, name=f"lease {self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, *, release: bool = True) -> None:
        """Stop trying; give the Lease back when holding it (`release`), so another replica
        takes over at its next try."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timings.retry_s + 5)
        if release and self.leading:
            self.release()
        self._renewed_at = None
        telemetry.leading(self.lease, False)

    def _loop(self) -> None:
        held = self.leading
        while True:
            try:
                self._try()
                self._problem = ""
            except ToolError as exc:
                if exc.message != self._problem:
                    self._say(f"Lease {self.lease}: {exc.message}")
                self._problem = exc.message
            if held and not self.leading:
                self._say(f"lost the Lease {self.lease}: stopping the work")
            held = self.leading
            telemetry.leading(self.lease, held)
            pause = self.timings.retry_s
            if not self.leading:
                pause *= 1 + random.random() * JITTER
            if self._stop.wait(pause):
                return

    # -- one try, as client-go's tryAcquireOrRenew -------------------------------------------

    def _try(self) -> bool:
        with self._lock:
            sent = time.monotonic()
            lease = self._read()
            if lease is None:
                return self._write(None, self._spec(None), sent)
            spec = lease.get("spec") or {}
            self._observe(lease)
            holder = str(spec.get("holderIdentity") or "")
            duration = float(spec.get("leaseDurationSeconds") or self.timings.lease_s)
            if holder and holder != self.identity and time.monotonic() < self._seen_at + duration:
                self._renewed_at = None  # held by another (it may have taken ours)
                return False
            return self._write(lease, self._spec(spec), sent)

    def _read(self) -> Json | None:
        try:
            return self.api.request(
                "GET",
                f"{self._path}/{self.name}",
                what=f"Lease {self.lease}",
                timeout=self._timeout(),
            )
        except NotFound:
            return None

    def _spec(self, current: Json | None) -> Json:
        now = _micro_time()
        spec = dict(current or {})
        if spec.get("holderIdentity") != self.identity:  # a new term
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (
                1 if current is not None else 0
            )
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=round(self.timings.lease_s),
            renewTime=now,
        )
        return spec

    def _write(self, lease: Json | None, spec: Json, sent: float) -> bool:
        """Create the Lease, or update it at the version read; False when another replica
        wrote first (the API server's conflict)."""
        meta: Json = {"name": self.name, "namespace": self.namespace}
        if lease is not None:
            meta = {**lease["metadata"], **meta}
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta}
        body["spec"] = spec
        path = self._path if lease is None else f"{self._path}/{self.name}"
        try:
            written = self.api.request(
                "POST" if lease is None else "PUT",
                path,
                body=body,
                what=f"Lease {self.lease}",
                timeout=self._timeout(),
            )
        except Conflict:
            return False
        self._renewed_at = sent
        self._observe(written)
        return True

    def _observe(self, lease: Json) -> None:
        spec = lease.get("spec") or {}
        record = (
            spec.get("holderIdentity") or "",
            spec.get("renewTime"),
            spec.get("leaseTransitions"),
            spec.get("leaseDurationSeconds"),
        )
        if record != self._seen:
            self._seen, self._seen_at = record, time.monotonic()
        annotations = (lease.get("metadata") or {}).get("annotations") or {}
        self._annotations = {
            k[len(STAMP_PREFIX) :]: str(v)
            for k, v in annotations.items()
            if k.startswith(STAMP_PREFIX)
        }

    def _timeout(self) -> float:
        """A request may take what is left of the renew deadline, never more: a hung API server
        must not keep the thread past the moment the holder stops."""
        return max(1.0, self.timings.renew_s - self.timings.retry_s)

    # -- release and the schedule's stamps ---------------------------------------------------

    def release(self) -> None:
        """Give the Lease back: no holder, a lease of 1 s (the next try of another replica takes
        it). Nothing when another holds it meanwhile."""
        with self._lock:
            try:
                lease = self._read()
                spec = (lease or {}).get("spec") or {}
                if lease is None or spec.get("holderIdentity") != self.identity:
                    return
                spec = {
                    **spec,
                    "holderIdentity": "",
                    "leaseDurationSeconds": RELEASED_LEASE_S,
                    "renewTime": _micro_time(),
                }
                self.api.request(
                    "PUT",
                    f"{self._path}/{self.name}",
                    body={**lease, "spec": spec},
                    what=f"Lease {self.lease}",
                    timeout=self._timeout(),
                )
            except ToolError as exc:  # it expires on its own
                self._say(f"Lease {self.lease} not released ({exc.message}); it expires")
            finally:
                self._renewed_at = None

    def stamps(self) -> dict[str, str]:
        """The part's stamps (annotations `kubecrew.io/<key>`) as the Lease was last read."""
        return dict(self._annotations)

    def stamp(self, key: str, value: str) -> None:
        """Record `key` on the Lease, while leading (a merge patch: it never undoes a renewal)."""
        if not self.leading:
            return
        patch = {"metadata": {"annotations": {STAMP_PREFIX + key: value}}}
        with self._lock:
            written = self.api.request(
                "PATCH",
                f"{self._path}/{self.name}",
                body=patch,
                content_type="application/merge-patch+json",
                what=f"Lease {self.lease}",
                timeout=self._timeout(),
            )
            self._observe(written)


def _micro_time() -> str:
    """A MicroTime, as the API server stores a Lease's times."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- the work, fenced ---------------------------------------------------------------------------


async def until_leading(leadership: Leadership) -> None:
    while not leadership.leading:
        await anyio.sleep(FENCE_CHECK_S)


async def fenced(leadership: Leadership, work: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
    """Run `work` while leading: (True, its result) when it ends, (False, None) when the
    leadership lapsed first and the work was cancelled."""
    result: list[T] = []
    async with anyio.create_task_group() as group:

        async def working() -> None:
            result.append(await work())
            group.cancel_scope.cancel()

        group.start_soon(working)
        while leadership.leading:
            await anyio.sleep(FENCE_CHECK_S)
        group.cancel_scope.cancel()
    return (True, result[0]) if result else (False, None)


def standing_by(leadership: Leadership) -> str:
    """What a replica that does not hold the Lease says."""
    holder = leadership.holder
    held = f", held by {holder}" if holder else ""
    return f"waiting for the Lease {leadership.lease}{held}; {leadership.identity} stands by"


async def lead(leadership: Leadership, work: Callable[[], Awaitable[Any]], *, say: Say) -> None:
    """Wait to lead, work while leading; after a lost Lease, wait to lead again. Returns when
    the work returns."""
    if not leadership.leading:
        say(standing_by(leadership))
    while True:
        await until_leading(leadership)
        say(f"leading: {leadership.identity} holds the Lease {leadership.lease}")
        finished, _ = await fenced(leadership, work)
        if finished:
            return
        say(f"stopped working; waiting for the Lease {leadership.lease} again")


# -- the command line ---------------------------------------------------------------------------


LeaderElectOption = Annotated[
    bool,
    typer.Option(
        "--leader-elect",
        envvar="KUBECREW_LEADER_ELECT",
        help="Work only while holding this part's Lease in the crew's namespace "
        f"(${NAMESPACE_ENV}, else the pod's, else {DEFAULT_NAMESPACE}): run two or more "
        "replicas and one works at a time, the others take over within the lease duration.",
    ),
]
LeaseDurationOption = Annotated[
    float,
    typer.Option(
        "--leader-elect-lease-duration",
        min=1.0,
        help="Seconds a replica waits after the holder's last renewal before taking over.",
    ),
]
RenewDeadlineOption = Annotated[
    float,
    typer.Option(
        "--leader-elect-renew-deadline",
        min=0.5,
        help="Seconds the holder keeps working without renewing before it stops.",
    ),
]
RetryPeriodOption = Annotated[
    float,
    typer.Option(
        "--leader-elect-retry-period",
        min=0.1,
        help="Seconds between two renewals, and between two tries of a replica that waits.",
    ),
]


def election(
    name: str,
    kubeconfig: Path | None,
    context: str | None,
    *,
    timings: tuple[float, float, float],
    say: Say,
    environ: Mapping[str, str] = os.environ,
) -> Leadership:
    """The election of Lease `name` in the crew's namespace, as the identity of `kubeconfig`
    (the part's agent): not started. Bad timings are a `LeaseError`."""
    try:
        chosen = Timings(*timings)
    except ValueError as exc:
        raise LeaseError(f"leader election timings: {exc}") from exc
    from kubernetes.config import ConfigException

    from core.connection import Clusters

    try:
        api = Clusters(kubeconfig=kubeconfig, default_context=context).api()
    except (ToolError, ConfigException) as exc:
        raise LeaseError(f"cannot reach the cluster for the Lease {name}: {exc}") from exc
    return Leadership(api, crew_namespace(environ), name, timings=chosen, say=say)


@contextmanager
def taking_part(leadership: Leadership | None) -> Iterator[None]:
    """Take part in the election for the block (none without a `leadership`); give the Lease
    back on the way out. A Lease that cannot be used is a `LeaseError` at once."""
    if leadership is None:
        yield
        return
    leadership.start()
    try:
        yield
    finally:
        leadership.stop()


def when_leading(leadership: Leadership | None, check: Check) -> Check:
    """A readiness check that counts only on the Lease's holder (always, without an election):
    what only the holder serves is not expected of a replica standing by."""
    if leadership is None:
        return check

    def checked() -> str | None:
        return check() if leadership.leading else None

    return checked


@contextmanager
def terminated_as_interrupted() -> Iterator[None]:
    """SIGTERM (how the kubelet stops a pod) ends the process as Ctrl-C does, so a holder gives
    its Lease back instead of leaving the next replica to wait for it to expire."""

    def interrupt(_signal: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
