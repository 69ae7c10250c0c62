"""`kubecrew sandbox up | down | status`: run the practice cluster from a home directory.

A sandbox home (`practice.home.Home`) is the whole contract between these commands and a running
sandbox: the server writes `sandbox.pid`, `url` and `kubeconfig` there, `down` signals that pid,
and `status` asks the cluster over HTTP with the kubeconfig's token (`practice.probe`), as any
client would. This module starts `sandbox.server` (in this process, or detached as
`python -m sandbox.server`) and says what happened; it never reaches into a running cluster's
objects, and it never prints a token. `kubecrew sandbox fault ...` lives in `cli.faults`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.cli.options import HomeOption, fail, out
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.practice.home import Home, wait_gone
from kubecrew.practice.probe import ApiClient, SandboxUnreachable, read_clock_rate, read_counts
from kubecrew.terminal import print_failure

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
LOG_TAIL_LINES = 20

app = typer.Typer(
    name="sandbox",
    help="Run a practice Kubernetes cluster on this machine (kubectl works against it).",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def _report_ready(home: Home, url: str, *, detail: str) -> None:
    try:
        client = ApiClient.from_kubeconfig(home.kubeconfig)
        nodes, rate = str(read_counts(client).nodes), read_clock_rate(client)
    except SandboxUnreachable:
        nodes, rate = "an unknown number of", 1.0
    out(
        f"[bold green]Sandbox ready[/] at {escape(url)} with {nodes} nodes ({escape(detail)}).",
        markup=True,
    )
    if rate > 1:  # sandbox/clock.py and timeframe.py: stamps are shown on the wall clock
        out(
            f"Its clock runs {rate:g}x real time: controllers, probes and timeouts act {rate:g} "
            "times faster, while the timestamps kubectl shows read as wall-clock time.",
        )
    out(escape(f"export KUBECONFIG={home.kubeconfig}"), markup=True)
    _install_agents(home)
    _crew_file(home)


# The sandbox serves every registry of its world at /registries/<host>/v2/ on its own server
# (sandbox/registryapi.py). Written as a path, the mirror follows the kubeconfig's server, and is
# trusted with its CA, across restarts on other ports.
SANDBOX_REGISTRIES = {"*": "/registries/{host}"}


def _crew_file(home: Home) -> None:
    """Point the crew (ask, chat, heal, watch, slack) at this sandbox and its registries, unless
    a crew file already says where to point it: a person's choice is never overwritten."""
    from kubecrew.crew import crew_file, write_crew_file

    written = write_crew_file(kubeconfig=home.kubeconfig, registries=SANDBOX_REGISTRIES)
    if written is not None:
        out(
            escape(f"Crew file written: {written} (the crew's commands use this sandbox)"),
            markup=True,
        )
    else:
        out(escape(f"Crew file {crew_file()} already exists: left as it is"), markup=True)


def _install_agents(home: Home) -> None:
    """What `kubecrew install` does on any cluster, done at start: the agents then act as their
    own ServiceAccounts. A failure leaves the sandbox up (the admin kubeconfig works), and says
    so."""
    from kubecrew.install.footprint import InstallError, Request, install

    try:
        report = install(Request(kubeconfig=home.kubeconfig))
    except InstallError as exc:
        print_failure(f"the agents' identities were not installed: {exc}", label="warning")
        return
    if report.kubeconfigs:
        where = report.kubeconfigs[0].path.parent
        names = ", ".join(k.path.name for k in report.kubeconfigs)
        out(escape(f"Agent kubeconfigs (one ServiceAccount each): {where}/ {names}"), markup=True)


# --- up ------------------------------------------------------------------------------------------


def _checked_state(state: Path) -> Path:
    state = state.expanduser().resolve()
    if state.is_dir():
        fail(f"--state {state} is a directory; give a file path (it is created when missing)")
    if not state.parent.is_dir():
        fail(f"--state {state}: the directory {state.parent} does not exist; create it first")
    return state


def _checked_scenario(path: Path) -> Path:
    from sandbox.scenario import ScenarioError, load  # the whole sandbox: only when asked

    path = path.expanduser().resolve()
    try:
        load(path)
    except ScenarioError as exc:
        fail(f"bad scenario: {exc}")
    return path


@dataclass(frozen=True)
class Launch:
    """What `up` was asked to start, already checked."""

    home: Home
    port: int
    state: Path | None
    nodes: int
    tls: bool
    scenario: Path | None = None
    rate: float | None = None
    seed: int | None = None

    def server_command(self) -> list[str]:
        flags = {
            "--home": self.home.path,
            "--port": self.port,
            "--nodes": self.nodes,
            "--state": self.state,
            "--scenario": self.scenario,
            "--rate": self.rate,
            "--seed": self.seed,
        }
        command = [sys.executable, "-m", "sandbox.server"]
        for flag, value in flags.items():
            if value is not None:
                command += [flag, str(value)]
        return [*command, "--tls"] if self.tls else command


def _up_foreground(launch: Launch) -> None:
    # Imported here so `kubecrew --help` and the other commands do not pay for the whole server.
    from sandbox.server import Options, serve

    home, started = launch.home, False

    def ready(url: str, _kubeconfig: Path) -> None:
        nonlocal started
        started = True
        _report_ready(home, url, detail="Ctrl-C stops it")

    options = Options(
        home=home.path,
        port=launch.port,
        state=launch.state,
        nodes=launch.nodes,
        use_tls=launch.tls,
        scenario=launch.scenario,
        rate=launch.rate,
        seed=launch.seed,
    )
    try:
        serve(options, on_ready=ready)
    except SystemExit as exc:
        if isinstance(exc.code, str):  # the server explains itself, e.g. "port in use"
            fail(exc.code)
        raise
    except KeyboardInterrupt:
        home.forget()  # Ctrl-C came before the server took over the signal: clean up for it
    except Exception as exc:
        if started:
            raise
        fail(
            f"the sandbox could not start from {home}: {exc}"
            + (f" (state file {launch.state})" if launch.state else "")
        )
    out("Sandbox stopped.", markup=True)


def _child_failed(home: Home, message: str) -> NoReturn:
    try:
        tail = "\n".join(home.log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:])
    except OSError:
        tail = ""
    Console(stderr=True, highlight=False).print(tail or "(empty log)", markup=False, soft_wrap=True)
    fail(f"{message}; the lines above are the end of {home.log}")


def _ready_url(home: Home, child: subprocess.Popen[bytes]) -> str | None:
    url = home.url
    if url is None or home.recorded_pid() != child.pid:
        return None
    with contextlib.suppress(SandboxUnreachable):
        ApiClient.from_kubeconfig(home.kubeconfig).get("/readyz", timeout=1.0)
        return url
    return None


def _wait_ready(home: Home, child: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if child.poll() is not None:
            _child_failed(home, f"the sandbox server exited with status {child.returncode}")
        url = _ready_url(home, child)
        if url is not None:
            return url
        time.sleep(0.1)
    child.terminate()
    _child_failed(home, f"the sandbox did not answer /readyz within {READY_TIMEOUT:.0f} s")


def _up_detached(launch: Launch) -> None:
    home = launch.home
    home.path.mkdir(parents=True, exist_ok=True)
    home.forget()  # leftovers of a crashed run would fool the readiness wait
    with home.log.open("wb") as log:
        child = subprocess.Popen(
            launch.server_command(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,  # Ctrl-C in this terminal must not reach the sandbox
        )
    with Console(stderr=True).status("Starting the sandbox…"):
        url = _wait_ready(home, child)
    _report_ready(home, url, detail=f"pid {child.pid}, log {home.log}")
    out(escape(f"Stop it with: kubecrew sandbox down --home {home}"), markup=True)


@app.command()
def up(
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on; 0 picks a free one.")
    ] = 0,
    state: Annotated[
        Path | None,
        typer.Option(
            help="SQLite file that keeps the cluster's objects across restarts "
            "[default: in memory, gone when the sandbox stops].",
            show_default=False,
        ),
    ] = None,
    nodes: Annotated[int, typer.Option(min=0, help="Number of Ready nodes to start with.")] = 3,
    tls: Annotated[
        bool,
        typer.Option(
            "--tls/--no-tls",
            help="HTTPS with a generated CA (in the kubeconfig). kubectl sends no token over "
            "plain HTTP, so with --no-tls every kubectl request is anonymous.",
        ),
    ] = True,
    detach: Annotated[
        bool,
        typer.Option("--detach", help="Run in the background and return once the API answers."),
    ] = False,
    scenario: Annotated[
        Path | None,
        typer.Option(
            help="Start from a scenario file (nodes, apps, faults; see scenarios/*.yaml).",
            show_default=False,
        ),
    ] = None,
    rate: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Clock speed: 10 lives ten sandbox seconds per real one "
            "[default: the scenario's, else 1].",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of every random choice, so runs repeat [default: the scenario's, else 0].",
            show_default=False,
        ),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Start a sandbox cluster and write a kubeconfig for it.

    In the foreground it runs until Ctrl-C; with --detach it runs in the background
    (logs in HOME/sandbox.log) until `kubecrew sandbox down`.

    **Examples**

    ```
    kubecrew sandbox up                      # foreground, free port, 3 nodes
    kubecrew sandbox up --detach --port 6443 --nodes 5
    kubecrew sandbox up --detach --state ~/shop.db   # objects survive restarts
    kubecrew sandbox up --detach --scenario scenarios/shop.yaml --rate 10 --seed 7
    export KUBECONFIG=~/.kubecrew/sandbox/kubeconfig && kubectl get nodes
    ```
    """
    where = Home.resolve(home)
    pid = where.running_pid()
    if pid is not None:
        fail(
            f"a sandbox from {where} is already running (pid {pid}); "
            f"stop it first with: kubecrew sandbox down --home {where}"
        )
    checked_state = None if state is None else _checked_state(state)
    checked_scenario = None if scenario is None else _checked_scenario(scenario)
    launch = Launch(where, port, checked_state, nodes, tls, checked_scenario, rate, seed)
    if detach:
        _up_detached(launch)
    else:
        _up_foreground(launch)


# --- down and status -----------------------------------------------------------------------------


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass  # it exited on its own in the meantime: that is what we wanted
    except PermissionError:
        fail(f"not allowed to signal the sandbox process {pid}; stop it as the user who started it")


@app.command()
def down(home: HomeOption = None) -> None:
    """Stop the sandbox running from a home (SIGTERM, then SIGKILL after 10 s).

    **Examples**

    ```
    kubecrew sandbox down
    kubecrew sandbox down --home /tmp/demo-sandbox
    ```
    """
    where = Home.resolve(home)
    pid = where.running_pid()
    if pid is None:
        where.forget()
        out(escape(f"no sandbox is running from {where}"), markup=True)
        return
    _signal(pid, signal.SIGTERM)
    with Console(stderr=True).status(f"Stopping the sandbox (pid {pid})…"):
        stopped = wait_gone(pid, timeout=STOP_TIMEOUT)
    how = "stopped"
    if not stopped:
        _signal(pid, signal.SIGKILL)
        wait_gone(pid, timeout=2.0)
        how = f"killed (it ignored SIGTERM for {STOP_TIMEOUT:.0f} s)"
    where.forget()
    out(escape(f"Sandbox {how}: pid {pid}, home {where}."), markup=True)


def _status(where: Home, pid: int) -> tuple[dict[str, object], str | None]:
    """The running sandbox as a record, and why its API does not answer, if it does not."""
    found: dict[str, object] = {
        "state": "running",
        "home": str(where),
        "pid": pid,
        "url": where.url,
        "kubeconfig": str(where.kubeconfig),
    }
    try:
        counts = read_counts(ApiClient.from_kubeconfig(where.kubeconfig))
    except SandboxUnreachable as exc:
        return found, str(exc)
    sizes = {"nodes": counts.nodes, "ready_nodes": counts.ready_nodes}
    return found | sizes | {"namespaces": counts.namespaces}, None


def _status_lines(found: dict[str, object]) -> list[str]:
    rows = [
        ("state", "[green]running[/]"),
        ("pid", str(found["pid"])),
        ("url", escape(str(found["url"] or "(starting)"))),
        ("kubeconfig", escape(str(found["kubeconfig"]))),
    ]
    if "nodes" in found:
        rows.append(("nodes", f"{found['nodes']} ({found['ready_nodes']} Ready)"))
        rows.append(("namespaces", str(found["namespaces"])))
    return [f"{label:<11} {value}" for label, value in rows]


@app.command()
def status(home: HomeOption = None, output: OutputOption = Format.table) -> None:
    """Show whether a sandbox runs from a home: pid, URL, kubeconfig, nodes and namespaces.

    Exits 1 when no sandbox is running (handy in scripts); as data, `state` says which.

    **Examples**

    ```
    kubecrew sandbox status
    kubecrew sandbox status --home /tmp/demo-sandbox || kubecrew sandbox up --detach
    kubecrew sandbox status -o json
    ```
    """
    where = Home.resolve(home)
    pid = where.running_pid()
    if pid is None:
        stopped = (
            f"state       [yellow]not running[/] (no sandbox is running from {escape(str(where))})"
        )
        emit(output, {"state": "not running", "home": str(where)}, [stopped], markup=True)
        raise typer.Exit(1)
    found, problem = _status(where, pid)
    emit(output, found, _status_lines(found), markup=True)
    if problem is not None:
        fail(f"the sandbox process runs but its API does not answer: {problem}")
