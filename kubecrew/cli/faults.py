"""`kubecrew sandbox fault add | list | clear`: break the running sandbox on purpose, and mend it.

The commands speak to the running sandbox's admin endpoint (`/kubecrew/v1/faults`) as any client
would, with the kubeconfig's server, CA and token from the sandbox home; the sandbox validates
each spec and its refusal (which field is wrong) is printed as the one failure line. Values given
with `--param key=value` are read as YAML scalars (numbers, booleans) and dotted keys nest
(`changes.cpu_millis=900`). It never prints a token and knows nothing of the sandbox's insides.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
import yaml
from rich.markup import escape

from kubecrew.cli.options import HomeOption, fail, out
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.practice.home import Home
from kubecrew.practice.probe import FAULTS_PATH, ApiClient, SandboxUnreachable

app = typer.Typer(
    name="fault",
    help="Break the running sandbox on purpose (dead nodes, missing images, leaks, API errors), "
    "and mend it.\n\n"
    "Example: `kubecrew sandbox fault add node-heartbeat --node node-2`, then "
    "`kubecrew sandbox fault list` and `kubecrew sandbox fault clear --all`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def _admin_call(home: Home, method: str, path: str, body: object = None) -> Any:
    """One request to the running sandbox's admin endpoint; one clear failure line otherwise."""
    if home.running_pid() is None:
        fail(f"no sandbox is running from {home}; start one with: kubecrew sandbox up --detach")
    try:
        return ApiClient.from_kubeconfig(home.kubeconfig).call(method, path, body)
    except SandboxUnreachable as exc:
        fail(str(exc))


def _param_value(text: str) -> Any:
    # YAML reads numbers, booleans and {k: v} maps; anything else stays text ("10Mi", "node-2").
    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def _fault_spec(kind: str, params: list[str], named: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": kind}
    spec.update({key: value for key, value in named.items() if value is not None})
    for pair in params:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            fail(f"--param {pair!r}: write it as key=value, e.g. --param rate=10Mi")
        *parents, leaf = key.strip().split(".")  # changes.memory_growth=10Mi nests
        target = spec
        for parent in parents:
            target = target.setdefault(parent, {})
            if not isinstance(target, dict):
                fail(f"--param {pair!r}: {parent} is already set to a value")
        target[leaf] = _param_value(value)
    return spec


def _fault_line(fault: dict[str, Any]) -> str:
    params = fault.get("params") or {}
    text = " ".join(
        f"{k}={json.dumps(v) if isinstance(v, dict | list) else v}" for k, v in params.items()
    )
    when = fault.get("since") or (f"at +{fault['at']:g}s" if "at" in fault else "")
    return f"{fault['id']:<6} {fault['kind']:<15} {fault['state']:<10} {when:<21} {text}"


@app.command("add")
def fault_add(
    kind: Annotated[
        str,
        typer.Argument(
            metavar="KIND",
            help="node-heartbeat, node-condition, gpu-fault, image-missing, app-profile, "
            "memory-leak, error-rate, slow, machine-provision-fails, node-joins-not-ready or api.",
            show_default=False,
        ),
    ],
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="A field of the fault as key=value (repeatable)."),
    ] = None,
    node: Annotated[str | None, typer.Option(help="The node (node faults).")] = None,
    image: Annotated[str | None, typer.Option(help="An image: repo or repo:tag.")] = None,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Only pods in this namespace.")
    ] = None,
    selector: Annotated[
        str | None, typer.Option("--selector", "-l", help="Only pods with these labels (app=web).")
    ] = None,
    at: Annotated[
        float | None,
        typer.Option(min=0, help="Sandbox seconds after the sandbox started [default: now]."),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Inject a fault into the running sandbox and print its id.

    **Examples**

    ```
    kubecrew sandbox fault add node-heartbeat --node node-2
    kubecrew sandbox fault add gpu-fault --node gpu-3
    kubecrew sandbox fault add node-condition --node node-1 -p type=MemoryPressure -p status=True
    kubecrew sandbox fault add image-missing --image nginx:1.27
    kubecrew sandbox fault add memory-leak -n shop -l app=api -p rate=10Mi
    kubecrew sandbox fault add error-rate -n shop -l app=api -p rate=0.5
    kubecrew sandbox fault add slow --image ghcr.io/kubecrew/shop-api -p latency_ms=900
    kubecrew sandbox fault add app-profile -l app=web -p changes.cpu_millis=900
    kubecrew sandbox fault add api -p error_rate=0.1 -p throttle_rate=0.05
    kubecrew sandbox fault add node-joins-not-ready -p deployment=workers -p count=1
    ```
    """
    named = {"node": node, "image": image, "namespace": namespace, "selector": selector, "at": at}
    spec = _fault_spec(kind, param or [], named)
    fault = _admin_call(Home.resolve(home), "POST", FAULTS_PATH, spec)
    out(
        escape(f"Fault {fault['id']} added: {_fault_line(fault).split(None, 1)[1].strip()}"),
        markup=True,
    )
    out(escape(f"Clear it with: kubecrew sandbox fault clear {fault['id']}"), markup=True)


@app.command("list")
def fault_list(home: HomeOption = None, output: OutputOption = Format.table) -> None:
    """List the faults in force (and those a scenario has scheduled).

    As data: each fault as the sandbox's admin endpoint gives it.

    **Examples**

    ```
    kubecrew sandbox fault list
    kubecrew sandbox fault list --home /tmp/demo-sandbox
    kubecrew sandbox fault list -o json
    ```
    """
    faults = _admin_call(Home.resolve(home), "GET", FAULTS_PATH)["items"]
    heading = f"{'ID':<6} {'KIND':<15} {'STATE':<10} {'SINCE':<21} PARAMS"
    lines = [heading, *(_fault_line(fault) for fault in faults)] if faults else ["No faults."]
    emit(output, faults, lines)


@app.command("clear")
def fault_clear(
    fault_id: Annotated[
        str | None, typer.Argument(metavar="ID", help="The fault to clear (see `fault list`).")
    ] = None,
    all_faults: Annotated[bool, typer.Option("--all", help="Clear every fault.")] = False,
    home: HomeOption = None,
) -> None:
    """Clear one fault, or all of them; the sandbox heals as a real cluster would.

    **Examples**

    ```
    kubecrew sandbox fault clear f-2
    kubecrew sandbox fault clear --all
    ```
    """
    if (fault_id is None) == (not all_faults):
        fail("give a fault ID or --all (not both); `kubecrew sandbox fault list` shows the IDs")
    where = Home.resolve(home)
    if all_faults:
        cleared = _admin_call(where, "DELETE", FAULTS_PATH)["items"]
        out(f"Cleared {len(cleared)} fault{'s' if len(cleared) != 1 else ''}.", markup=True)
    else:
        fault = _admin_call(where, "DELETE", f"{FAULTS_PATH}/{fault_id}")
        out(escape(f"Cleared {fault['id']} ({fault['kind']})."), markup=True)
