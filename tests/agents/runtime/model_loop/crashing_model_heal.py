"""A model-planned heal run in a process of its own, which a test can have killed by SIGKILL at
one tool call: tests/support/crashing_heal.py (same spec, same servers, same kill hook),
with a scripted model (`scripts.investigator`) planning `learn`.

    python -m tests.agents.runtime.model_loop.crashing_model_heal '{"kubeconfig": ..., ...}'

The outcome of a run that survives goes to stdout as JSON, with how often the model was asked:
a resumed run carries on from its checkpoint, so a model that learned before the kill is not
asked again.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from agents.dev_team.heal import heal
from agents.runtime.brain import ModelPlanner
from tests.agents.runtime.model_loop.scripts import investigator
from tests.support.crashing_heal import servers
from tests.support.team import FAST


def main(spec: dict[str, Any]) -> None:
    log = Path(spec["log"])
    model = investigator()

    def on_call(tool: str, arguments: dict[str, Any]) -> None:
        with log.open("a") as out:
            out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")
            out.flush()
            os.fsync(out.fileno())
        if tool == spec.get("kill_at"):
            os.kill(os.getpid(), signal.SIGKILL)

    result = anyio.run(
        lambda: heal(
            "web",
            servers=servers(spec),
            planner=ModelPlanner(model),
            home=Path(spec["home"]),
            settings=FAST,
            thread=spec["thread"],
            on_call=on_call,
        )
    )
    outcome = {"outcome": result.outcome, "nodes": result.nodes, "summary": result.summary}
    print(json.dumps({**outcome, "model_turns": len(model.seen)}))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
