"""How simulated applications behave once their container starts: the `Profile` of each app.

A profile says what a process does, as far as the cluster can observe it: the ports it listens
on and the HTTP paths that answer 200, how long it takes to start, the CPU and memory it uses
(and leaks), the traffic it serves and how often it fails, what it logs, and whether it runs
forever or exits. The kubelet, probes, metrics and Prometheus read profiles; faults and
scenarios change them with `override` (e.g. "pods labelled app=api leak 5 MiB/s") and undo
that with `clear`.

The built-in profiles are written here; the applications of public images (mongo, prometheus,
grafana...) come from `catalog/apps.yaml` (`sandbox.kubelet.apps`), each a built-in profile with
that application's own ports, paths, start-up and first log lines.

Which profile a container runs: the pod annotation `sandbox.kubecrew.io/profile` (a name for
every container, or `<container>=<name>,...`), else its image's profile from the `ImageCatalog`,
else `web`; then every matching override, oldest first. This module knows images only through
the catalog and pods only as raw dicts; it knows nothing of nodes, timers or the API.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import cache
from typing import Any

from sandbox.kubelet import apps
from sandbox.kubelet.images import ImageCatalog, normalize
from sandbox.store import Obj

ANNOTATION = "sandbox.kubecrew.io/profile"
DEFAULT_PROFILE = "web"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Profile:
    name: str
    ports: tuple[int, ...]  # TCP ports it listens on once started
    http_paths: tuple[str, ...]  # paths answering 200 on those ports ("/" , "/healthz", ...)
    startup_seconds: float  # container start -> listening/healthy
    cpu_millis: float  # steady CPU use
    memory_bytes: float  # steady memory after startup
    memory_growth: float = 0.0  # bytes per second added while running (a leak)
    cpu_pattern: str = "steady"  # "steady" | "spiky"
    requests_per_second: float = 0.0  # traffic one ready replica serves (0: not a server)
    error_rate: float = 0.0  # fraction of requests answered 5xx
    latency_ms: float = 20.0  # typical latency
    log_lines: tuple[str, ...] = ()  # what it prints while healthy
    error_log_lines: tuple[str, ...] = ()  # what it prints before it fails (the last is the cause)
    runs_forever: bool = True  # False: exits after `run_seconds` with `exit_code`
    run_seconds: float = 0.0
    exit_code: int = 0
    startup_log_lines: tuple[str, ...] = ()  # printed once when the container starts
    required_env: tuple[str, ...] = ()  # at least one must be set, else it exits 1 at start

    def serves(self, port: int) -> bool:
        return port in self.ports


@dataclass(frozen=True)
class Override:
    id: str
    namespace: str | None
    selector: dict[str, str] | None
    image: str | None  # a repository (every tag) or repository:tag, normalized
    changes: dict[str, Any]

    def matches(self, pod: Obj, container: Obj) -> bool:
        meta = pod.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        if self.selector:
            labels = meta.get("labels") or {}
            if any(labels.get(k) != v for k, v in self.selector.items()):
                return False
        if self.image is not None:
            ref = normalize(str(container.get("image") or ""))
            wanted = normalize(self.image)
            if ref.repository != wanted.repository:
                return False
            if _has_tag(self.image) and ref.tag != wanted.tag:
                return False
        return True


_FIELDS = {f.name for f in dataclasses.fields(Profile)}


class ProfileBook:
    """Named profiles plus the overrides faults have put in force."""

    def __init__(self, images: ImageCatalog | None = None) -> None:
        # The world binds its own catalog here (the kubelet does it when it starts), so images a
        # scenario adds are seen; until then the default catalog answers.
        self.images = images if images is not None else ImageCatalog.default()
        self._profiles: dict[str, Profile] = {
            p.name: p for p in (*_DEFAULT_PROFILES, *app_profiles())
        }
        self._overrides: dict[str, Override] = {}
        self._ids = itertools.count(1)
        self.version = 0  # moves on every change, so the kubelet can notice one and look again

    def get(self, name: str) -> Profile | None:
        return self._profiles.get(name)

    def names(self) -> list[str]:
        return sorted(self._profiles)

    def define(self, profile: Profile) -> None:
        self._profiles[profile.name] = profile
        self.version += 1

    def base_for(self, pod: Obj, container: Obj) -> Profile:
        """The profile before overrides: annotation, image, then the `web` default."""
        named = _annotated(pod, str(container.get("name") or ""))
        if named and named in self._profiles:
            return self._profiles[named]
        image = self.images.resolve(str(container.get("image") or ""))
        if image is not None and image.profile in self._profiles:
            return self._profiles[image.profile]
        return self._profiles[DEFAULT_PROFILE]

    def profile_for(self, pod: Obj, container: Obj) -> Profile:
        profile = self.base_for(pod, container)
        for override in self._overrides.values():
            if override.matches(pod, container):
                profile = self._apply(profile, override.changes)
        return profile

    def override(
        self,
        *,
        namespace: str | None,
        selector: dict[str, str] | None,
        image: str | None,
        changes: dict[str, Any],
    ) -> str:
        """Change matching containers' behaviour until `clear(id)`. `changes` holds Profile
        fields, and may name another profile to switch to with `"profile": "leaky"`."""
        unknown = set(changes) - _FIELDS - {"profile"}
        if unknown:
            raise ValueError(f"unknown profile fields {sorted(unknown)}; known: {sorted(_FIELDS)}")
        if "profile" in changes and changes["profile"] not in self._profiles:
            raise ValueError(f"no profile named {changes['profile']!r}; define it first")
        override_id = f"override-{next(self._ids)}"
        selector_copy = dict(selector) if selector is not None else None
        self._overrides[override_id] = Override(
            override_id, namespace, selector_copy, image, dict(changes)
        )
        self.version += 1
        return override_id

    def clear(self, override_id: str) -> None:
        if self._overrides.pop(override_id, None) is not None:
            self.version += 1

    def overrides(self) -> list[Override]:
        return list(self._overrides.values())

    def usual_latency(self, profile: Profile) -> float:
        """The latency `profile`'s log lines were written for: that of the built-in profile
        they come from (a scenario's `base`, a fault switching profiles), else that of the
        profile of its name before any override. A profile answering at another latency is
        slow (or fast), and logs so (`sandbox.kubelet.access`)."""
        written = _WRITTEN_FOR.get(profile.log_lines)
        if written is not None:
            return written
        named = self._profiles.get(profile.name)
        return named.latency_ms if named is not None else profile.latency_ms

    def _apply(self, profile: Profile, changes: dict[str, Any]) -> Profile:
        if "profile" in changes:
            switched = self._profiles.get(changes["profile"])
            if switched is not None:
                profile = switched
        fields = {k: v for k, v in changes.items() if k in _FIELDS and k != "name"}
        for key in ("ports", "http_paths", "log_lines", "error_log_lines", "startup_log_lines"):
            if key in fields and not isinstance(fields[key], tuple):
                fields[key] = tuple(fields[key])
        return dataclasses.replace(profile, **fields) if fields else profile


def _has_tag(reference: str) -> bool:
    name = reference.split("@", 1)[0]
    return name.rfind(":") > name.rfind("/")


def _annotated(pod: Obj, container: str) -> str | None:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    if not value:
        return None
    if "=" not in value:
        return str(value).strip()
    for part in str(value).split(","):
        name, _, profile = part.partition("=")
        if name.strip() == container:
            return profile.strip()
    return None


def _access(path: str = "/", status: int = 200, size: int = 615, ip: str = "10.244.0.1") -> str:
    return f'{ip} - - "GET {path} HTTP/1.1" {status} {size} "-" "kube-probe/1.37" "-"'


_NGINX_START = (
    "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform "
    "configuration",
    "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
    "/docker-entrypoint.sh: Configuration complete; ready for start up",
    '[notice] 1#1: using the "epoll" event method',
    "[notice] 1#1: nginx/1.27.3",
    "[notice] 1#1: start worker processes",
)

_DEFAULT_PROFILES: tuple[Profile, ...] = (
    Profile(
        "web",
        (8080,),
        ("/", "/healthz", "/ready", "/livez", "/readyz", "/metrics"),
        2.0,
        cpu_millis=25,
        memory_bytes=64 * MIB,
        requests_per_second=50,
        latency_ms=25,
        log_lines=('level=info msg="GET /healthz 200 1.2ms"', 'level=info msg="GET / 200 8.4ms"'),
        error_log_lines=('level=error msg="request failed" err="context deadline exceeded"',),
        startup_log_lines=('level=info msg="listening" addr=":8080"',),
    ),
    Profile(
        "nginx",
        (80,),
        ("/", "/index.html"),
        1.0,
        cpu_millis=2,
        memory_bytes=8 * MIB,
        requests_per_second=200,
        latency_ms=3,
        log_lines=(_access(), _access("/index.html")),
        error_log_lines=(
            '[error] 29#29: *1 open() "/usr/share/nginx/html/x" failed (2: No such '
            "file or directory)",
        ),
        startup_log_lines=_NGINX_START,
    ),
    Profile(
        "nginx-unprivileged",
        (8080,),
        ("/", "/index.html"),
        1.0,
        cpu_millis=2,
        memory_bytes=8 * MIB,
        requests_per_second=200,
        latency_ms=3,
        log_lines=(_access(),),
        startup_log_lines=_NGINX_START,
    ),
    Profile(
        "httpd",
        (80,),
        ("/", "/index.html"),
        1.0,
        cpu_millis=3,
        memory_bytes=12 * MIB,
        requests_per_second=150,
        latency_ms=4,
        log_lines=('10.244.0.1 - - "GET / HTTP/1.1" 200 45',),
        startup_log_lines=(
            "AH00558: httpd: Could not reliably determine the server's fully qualified domain "
            "name. Set the 'ServerName' directive globally to suppress this message",
            "[mpm_event:notice] [pid 1:tid 1] AH00489: Apache/2.4.62 (Unix) configured -- "
            "resuming normal operations",
        ),
    ),
    Profile("busybox", (), (), 0.0, cpu_millis=0, memory_bytes=0.5 * MIB, runs_forever=False),
    Profile("repl", (), (), 0.0, cpu_millis=1, memory_bytes=10 * MIB, runs_forever=False),
    Profile("pause", (), (), 0.0, cpu_millis=0, memory_bytes=0.3 * MIB),
    Profile(
        "redis",
        (6379,),
        (),
        0.5,
        cpu_millis=4,
        memory_bytes=4 * MIB,
        log_lines=(
            "1:M * 100 changes in 300 seconds. Saving...",
            "1:M * Background saving terminated with success",
        ),
        startup_log_lines=(
            "1:C * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
            "1:M * Server initialized",
            "1:M * Ready to accept connections tcp",
        ),
    ),
    Profile(
        "postgres",
        (5432,),
        (),
        4.0,
        cpu_millis=6,
        memory_bytes=40 * MIB,
        log_lines=(
            "LOG:  checkpoint starting: time",
            "LOG:  checkpoint complete: wrote 3 "
            "buffers (0.0%); 0 WAL file(s) added, 0 removed, 0 recycled",
        ),
        startup_log_lines=(
            "LOG:  starting PostgreSQL 17.2 on x86_64-pc-linux-gnu",
            'LOG:  listening on IPv4 address "0.0.0.0", port 5432',
            "LOG:  database system is ready to accept connections",
        ),
        error_log_lines=(
            "Error: Database is uninitialized and superuser password is not specified.",
            "       You must specify POSTGRES_PASSWORD to a non-empty value for the",
            '       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".',
        ),
        required_env=("POSTGRES_PASSWORD", "POSTGRES_HOST_AUTH_METHOD"),
    ),
    Profile(
        "mysql",
        (3306, 33060),
        (),
        8.0,
        cpu_millis=10,
        memory_bytes=360 * MIB,
        log_lines=("[System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections.",),
        startup_log_lines=("[Note] [Entrypoint]: Entrypoint script for MySQL Server started.",),
        error_log_lines=(
            "[ERROR] [Entrypoint]: Database is uninitialized and password option is not specified",
            "    You need to specify one of the following as an environment variable:",
            "    - MYSQL_ROOT_PASSWORD",
            "    - MYSQL_ALLOW_EMPTY_PASSWORD",
            "    - MYSQL_RANDOM_ROOT_PASSWORD",
        ),
        required_env=(
            "MYSQL_ROOT_PASSWORD",
            "MYSQL_ALLOW_EMPTY_PASSWORD",
            "MYSQL_RANDOM_ROOT_PASSWORD",
            "MARIADB_ROOT_PASSWORD",
            "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD",
        ),
    ),
    Profile("memcached", (11211,), (), 0.2, cpu_millis=1, memory_bytes=3 * MIB),
    Profile(
        "rabbitmq",
        (5672, 15672),
        ("/",),
        10.0,
        cpu_millis=30,
        memory_bytes=120 * MIB,
        startup_log_lines=("[info] <0.9.0> Server startup complete; 4 plugins started.",),
    ),
    Profile(
        "agnhost",
        (8080,),
        ("/", "/healthz", "/hostname", "/echo"),
        0.5,
        cpu_millis=1,
        memory_bytes=10 * MIB,
        requests_per_second=100,
    ),
    Profile(
        "http-echo",
        (5678,),
        ("/", "/health"),
        0.2,
        cpu_millis=1,
        memory_bytes=5 * MIB,
        requests_per_second=100,
        startup_log_lines=("[INFO] server is listening on :5678",),
    ),
    Profile(
        "shop-frontend",
        (8080,),
        ("/", "/healthz", "/ready", "/metrics"),
        3.0,
        cpu_millis=40,
        memory_bytes=90 * MIB,
        requests_per_second=80,
        latency_ms=35,
        log_lines=(
            '{"level":"info","msg":"GET / 200","duration_ms":31}',
            '{"level":"info","msg":"GET /products 200","duration_ms":44}',
        ),
        error_log_lines=('{"level":"error","msg":"upstream shop-api unavailable"}',),
        startup_log_lines=('{"level":"info","msg":"shop-frontend listening on :8080"}',),
    ),
    Profile(
        "shop-api",
        (8080,),
        ("/", "/healthz", "/ready", "/metrics", "/api/products"),
        5.0,
        cpu_millis=80,
        memory_bytes=180 * MIB,
        cpu_pattern="spiky",
        requests_per_second=60,
        latency_ms=45,
        log_lines=(
            '{"level":"info","msg":"GET /api/products 200","duration_ms":42}',
            '{"level":"info","msg":"POST /api/orders 201","duration_ms":88}',
        ),
        error_log_lines=(
            '{"level":"error","msg":"database connection refused",'
            '"error":"dial tcp 10.96.0.20:5432: connect: connection refused"}',
        ),
        startup_log_lines=(
            '{"level":"info","msg":"connected to database"}',
            '{"level":"info","msg":"shop-api listening on :8080"}',
        ),
    ),
    Profile(
        "shop-worker",
        (8080,),
        ("/healthz", "/metrics"),
        2.0,
        cpu_millis=120,
        memory_bytes=140 * MIB,
        cpu_pattern="spiky",
        log_lines=('{"level":"info","msg":"processed order","queue":"orders"}',),
        error_log_lines=('{"level":"error","msg":"queue unreachable"}',),
        startup_log_lines=('{"level":"info","msg":"worker started","concurrency":4}',),
    ),
    Profile(
        "leaky",
        (8080,),
        ("/", "/healthz", "/ready"),
        2.0,
        cpu_millis=30,
        memory_bytes=80 * MIB,
        memory_growth=1 * MIB,
        requests_per_second=40,
        log_lines=('level=info msg="cache size grew" entries=18231',),
        error_log_lines=('level=warn msg="heap usage high"',),
    ),
    Profile(
        "batch",
        (),
        (),
        0.0,
        cpu_millis=200,
        memory_bytes=50 * MIB,
        runs_forever=False,
        run_seconds=20.0,
        log_lines=("processing batch...",),
        startup_log_lines=("starting job",),
        error_log_lines=("job failed",),
    ),
    Profile("idle", (), (), 0.0, cpu_millis=0, memory_bytes=1 * MIB),
)

# Each built-in profile's log lines and the latency their logged durations show.
_WRITTEN_FOR: dict[tuple[str, ...], float] = {
    p.log_lines: p.latency_ms for p in _DEFAULT_PROFILES if p.log_lines
}


@cache
def app_profiles() -> tuple[Profile, ...]:
    """The profiles of `catalog/apps.yaml`'s applications, read once per process."""
    built_in = {p.name: p for p in _DEFAULT_PROFILES}
    return tuple(_derived(app, built_in[app.base]) for app in apps.load(bases=built_in))


def _derived(app: apps.App, base: Profile) -> Profile:
    logs = app.logs or base.startup_log_lines
    if not app.logs and base.name == DEFAULT_PROFILE:
        # `web`'s own line names 8080: an app says it listens where it does, or says nothing.
        logs = (f'level=info msg="listening" addr=":{app.ports[0]}"',) if app.ports else ()
    return dataclasses.replace(
        base,
        name=app.name,
        ports=app.ports,
        http_paths=app.paths,
        startup_seconds=base.startup_seconds if app.startup is None else app.startup,
        memory_bytes=base.memory_bytes if app.memory_mib is None else app.memory_mib * MIB,
        startup_log_lines=logs,
        error_log_lines=app.error_logs or base.error_log_lines,
        required_env=app.required_env,
    )
