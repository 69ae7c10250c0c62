"""`kubecrew demo [SCENE]` (what `make demo` runs): the crew at work, scene by scene.

Each scene runs on a fresh sandbox in a temporary home (`demo_world.fresh_world`), with the
deterministic brain whatever model is configured, so the story is the same on every machine and
doubles as an end-to-end test. The person's actions are printed as commands; what each agent
sees, decides and does is narrated, with the ids of the PRs, proposals and approvals it made.
A scene fails at the first thing that did not happen as told; the command then exits 1, after
running the other scenes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from kubecrew.demo.world import World

Play = Callable[["World"], None]


@dataclass(frozen=True)
class Scene:
    name: str
    title: str
    about: str
    play: Play
    nodes: int = 3  # the sandbox's own nodes (0: every node comes from the scene's pools)


# Each scene imports its story when it plays, so `kubecrew --help` loads no agent.
def tour(world: World) -> None:
    from kubecrew.demo.tour import SAMPLE, walk_through

    with resources.as_file(resources.files("kubecrew.demo") / SAMPLE) as manifest:
        walk_through(world.tour, manifest)


def gitops_probing(world: World) -> None:
    from kubecrew.demo.gitops import gitops_probing

    gitops_probing(world)


def self_heal(world: World) -> None:
    from kubecrew.demo.scenes import self_heal

    self_heal(world)


def governance(world: World) -> None:
    from kubecrew.demo.scenes import governance

    governance(world)


def node_lifecycle(world: World) -> None:
    from kubecrew.demo.scenes import node_lifecycle

    node_lifecycle(world)


def upgrade(world: World) -> None:
    from kubecrew.demo.upgrade import upgrade

    upgrade(world)


SCENES = (
    Scene("tour", "The practice cluster", "a kubectl tour of the sandbox", tour),
    Scene(
        "gitops-probing",
        "1. GitOps and just-in-time probing",
        "deploy by PR, probe, survive a node failure, reconcile a hand edit",
        gitops_probing,
    ),
    Scene(
        "self-heal",
        "2. Self-healing",
        "an image typo synced from git is healed by the Dev Team's loop, no human",
        self_heal,
    ),
    Scene(
        "governance",
        "3. Governance",
        "the Cluster Operator proposes 5 -> 1, the Dev Team's policy counters 3",
        governance,
    ),
    Scene(
        "node-lifecycle",
        "4. Node lifecycle",
        "a GPU fault: cordon, plan, intent, wait for the checkpoint, drain within the PDB",
        node_lifecycle,
    ),
    Scene(
        "upgrade",
        "5. A zero-downtime upgrade",
        "v1.37 -> v1.38: control plane, then each pool; a training Job kept until it checkpoints",
        upgrade,
        nodes=0,
    ),
)
BY_NAME = {scene.name: scene for scene in SCENES}


def list_scenes(console: Console) -> None:
    table = Table("scene", "what it shows", box=None, show_header=False)
    for scene in SCENES:
        table.add_row(scene.name, escape(scene.about))
    console.print(table)


def play(scene: Scene, console: Console) -> bool:
    """Play one scene on a fresh sandbox: True when it happened as told."""
    from kubecrew.demo.tour import StepFailed
    from kubecrew.demo.world import fresh_world

    console.print()
    console.rule(f"[bold]{escape(scene.title)} [dim]({scene.name})", align="left")
    started = time.monotonic()
    try:
        with fresh_world(console, nodes=scene.nodes) as world:
            scene.play(world)
    except StepFailed as exc:
        print_failure(f"scene {scene.name}: {exc}", label="demo failed")
        return False
    except Exception as exc:  # an agent's or a server's error: one line, then the next scene
        print_failure(f"scene {scene.name}: {type(exc).__name__}: {exc}", label="demo failed")
        return False
    console.print(f"[green]Scene {scene.name} done[/] in {time.monotonic() - started:.0f} s.")
    return True


def demo(
    scene: Annotated[
        str | None,
        typer.Argument(help="One scene (see --list); all of them when left out.", metavar="SCENE"),
    ] = None,
    list_only: Annotated[bool, typer.Option("--list", help="List the scenes and stop.")] = False,
) -> None:
    """Show the crew at work on fresh sandboxes: GitOps and probing, self-healing, governance,
    node lifecycle.

    Exits 1 when a scene did not happen as narrated.

    **Examples**

    ```
    kubecrew demo --list
    kubecrew demo self-heal
    kubecrew demo
    ```
    """
    console = Console(highlight=False)
    if list_only:
        list_scenes(console)
        return
    if scene is not None and scene not in BY_NAME:
        print_failure(
            f"no scene {scene!r}; choose one of {', '.join(BY_NAME)} (kubecrew demo --list)"
        )
        raise typer.Exit(2)
    chosen = [BY_NAME[scene]] if scene else list(SCENES)
    console.rule("[bold]kubecrew demo: the crew on a practice cluster (deterministic mode)")
    results = {s.name: play(s, console) for s in chosen}
    console.print()
    summary = Table("scene", "result", box=None)
    for name, passed in results.items():
        shown = "[green]passed" if passed else "[red]FAILED"
        summary.add_row(name, shown)
    console.print(summary)
    if not all(results.values()):
        raise typer.Exit(1)
