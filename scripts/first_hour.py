"""Write docs/first-hour.md by doing what it describes: a newcomer's first hour with kubecrew.

Every command on the page runs for real, in a home of its own (a fresh sandbox, the
deterministic brain, no model), and the page shows what it printed on stdout. What differs from
run to run (the temporary home, ports, process ids, generated pod names, ids, times, ages) is
replaced by a stable placeholder, and the lines kubectl prints while it waits are left out, so
the page changes only when kubecrew's behaviour does.

    .venv/bin/python scripts/first_hour.py           # rewrite docs/first-hour.md
    .venv/bin/python scripts/first_hour.py --check   # exit 1, with a diff, when it differs

The test suite runs `--check` (tests/kubecrew/test_first_hour_page.py), so the page cannot go
stale: a change to what a command prints is a change to this page, made by running the script.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "first-hour.md"
BIN = Path(sys.executable).parent  # the venv's: kubecrew and the kubectl its packages install
WIDTH = "100"


@dataclass(frozen=True)
class Step:
    title: str
    prose: str
    commands: tuple[str, ...] = ()
    before: Callable[[dict[str, str]], None] | None = field(default=None, compare=False)


def _wait_for_pull_backoff(env: dict[str, str]) -> None:
    """Until the new pod of web waits in ImagePullBackOff: what a person sees a minute later."""
    jsonpath = "{.items[*].status.containerStatuses[*].state.waiting.reason}"
    for _ in range(120):
        reasons = _run(f"kubectl get pods -n shop -o jsonpath={jsonpath}", env).split()
        if "ImagePullBackOff" in reasons:
            return
        time.sleep(0.5)
    raise SystemExit("first-hour: web's new pod never reached ImagePullBackOff")


STEPS = (
    Step(
        "Install",
        "From a clone of the repository, one command installs everything (Python packages, "
        "kubectl, Prometheus) into `.venv`:\n\n```\nmake install\n. .venv/bin/activate\n```",
    ),
    Step(
        "A practice cluster",
        "kubecrew ships a Kubernetes-API-compatible sandbox: real kubectl and the official "
        "clients talk to it. `sandbox up` starts one, gives each agent its own ServiceAccount, "
        "and writes a crew file so every `kubecrew` command uses it.",
        ("kubecrew sandbox up --detach", "kubectl get nodes"),
    ),
    Step(
        "Something to look after",
        "Point kubectl at the sandbox with the `export` line `sandbox up` printed, then deploy "
        "as you would anywhere:",
        (
            "kubectl create namespace shop",
            "kubectl create deployment web --image=nginx:1.27 --replicas=2 -n shop",
            "kubectl rollout status deployment/web -n shop",
        ),
    ),
    Step(
        "Ask in your own words",
        "Questions never change anything. Answers go to stdout (`-o json` or `-o yaml` gives "
        "the same answer as data); what the crew is doing goes to stderr.",
        (
            "kubecrew ask 'what is running in shop?'",
            "kubecrew ask 'how many pods does web have in shop?'",
        ),
    ),
    Step(
        "Change something",
        "A change goes through the policy gate, a dry run and the audit, and is validated on "
        "the cluster afterwards. In a terminal the crew shows the plan and asks before it "
        "writes; from a script, `--skip-permissions` lets the changes policy allows proceed.",
        (
            "kubecrew ask --skip-permissions 'scale web in shop to 3 replicas'",
            "kubectl get deployment web -n shop",
        ),
    ),
    Step(
        "Break it, ask why, heal it",
        "A typo in an image tag, as happens on any Friday:",
        ("kubectl set image deployment/web nginx=nginx:1.277 -n shop",),
    ),
    Step(
        "",
        "A minute later the new pod cannot pull its image. Ask why: the crew reads the pods, "
        "the events and the rollout history, and recommends without changing anything.",
        ("kubecrew ask 'why is web failing in shop?'",),
        before=_wait_for_pull_backoff,
    ),
    Step(
        "",
        "`heal` carries the fix out (or `fix web in shop` in `kubecrew chat`): it picks the "
        "fix, applies it through policy, and validates it: the rollout completes, every pod "
        "stays Ready through a soak, and the diagnosis no longer finds the cause. On stderr it "
        "shows each step and what it waits for (`validating: 3/3 pods ready, soak 20 s of "
        "30 s`); a fix that does not hold is rolled back and the next one tried.",
        ("kubecrew heal web -n shop",),
    ),
    Step(
        "What the crew did, and why",
        "Every write is in the policy store's tamper-evident audit log, with the policy that "
        "allowed it. What the crew learns (incidents, its memory, approvals) belongs to this "
        "cluster: a new sandbox starts with none of it.",
        ("kubecrew status", "kubecrew audit list", "kubecrew audit verify"),
    ),
    Step(
        "Next",
        "- `kubecrew chat` to talk to the crew (the Dev Team, the Cluster Operator, the "
        "Platform agent) and answer its approval requests.\n"
        "- `kubecrew watch -n shop --heal` to notice and heal incidents as they happen.\n"
        "- A model: set `KUBECREW_MODEL` (see the README's Models section); the deterministic "
        "brain above needs none.\n"
        "- `kubecrew demo` for the crew at work on GitOps, governance and node lifecycle.",
        ("kubecrew sandbox down",),
    ),
)


def _run(command: str, env: dict[str, str]) -> str:
    argv = shlex.split(command)
    done = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=env["HOME"],
    )
    if done.returncode != 0:
        raise SystemExit(f"first-hour: `{command}` exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def _environment(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env.pop("KUBECONFIG", None)
    home = scratch / "home"
    home.mkdir()
    return {
        **env,
        "HOME": str(home),
        "KUBECREW_HOME": str(home / ".kubecrew"),
        "KUBECONFIG": str(home / ".kubecrew" / "sandbox" / "kubeconfig"),
        "COLUMNS": WIDTH,
        "TERM": "dumb",
        "NO_COLOR": "1",
    }


_STABLE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), placeholder)
    for pattern, placeholder in (
        (r"127\.0\.0\.1([:-])\d+", r"127.0.0.1\1PORT"),
        (r"(127\.0\.0\.1-PORT)-[0-9a-f]{10}", r"\1-DIGEST"),
        (r"\bpid \d+", "pid PID"),
        (r"\b(web)-[a-z0-9]{8,10}-[a-z0-9]{5}\b", r"\1-HASH-XXXXX"),
        (r"\b(web)-[a-z0-9]{8,10}\b", r"\1-HASH"),
        (r"\b([ap])-[0-9a-f]{8}\b", r"\1-XXXXXXXX"),
        (r"\b[0-9a-f]{32}\b", "THREAD"),
        (r"\b[0-9a-f]{64}\b", "HASH"),
        (r"\bhead [0-9a-f]{12}\b", "head HASH"),
        (r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "TIME"),
        (r"\bage \d+[smhd](\d+[smh])?\b", "age AGE"),
    )
)


def stable(text: str, home: Path) -> str:
    """`text` with what differs from run to run replaced by placeholders, and without the
    lines kubectl prints while it waits (how many depends on the machine's speed)."""
    text = text.replace(str(home), "~")
    for pattern, placeholder in _STABLE:
        text = pattern.sub(placeholder, text)
    lines = [line for line in text.rstrip().splitlines() if not line.startswith("Waiting for ")]
    return "\n".join(_tables(lines))


def _tables(lines: list[str]) -> list[str]:
    """kubectl's tables with their AGE column as a placeholder, re-aligned as kubectl aligns."""
    if not lines or "AGE" not in lines[0].split():
        return lines
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines]
    at = rows[0].index("AGE")
    for row in rows[1:]:
        if len(row) == len(rows[0]):
            row[at] = "AGE"
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    return ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows]


def page() -> str:
    """The page, from a fresh run of every step."""
    with tempfile.TemporaryDirectory(prefix="kubecrew-first-hour-") as scratch:
        env = _environment(Path(scratch))
        home = Path(env["HOME"])
        parts = [
            "# Your first hour with kubecrew",
            "",
            "What a newcomer types, and what kubecrew answers: every command below was run by "
            "`scripts/first_hour.py` on a fresh sandbox, and its output is shown as printed "
            "(temporary paths, ports, generated names, ids and times replaced by placeholders). "
            "The test suite reruns it, so this page is what kubecrew does today.",
        ]
        try:
            for step in STEPS:
                if step.before is not None:
                    step.before(env)
                if step.title:
                    parts += ["", f"## {step.title}"]
                parts += ["", step.prose]
                for command in step.commands:
                    printed = stable(_run(command, env), home)
                    parts += ["", "```", f"$ {command}", *([printed] if printed else []), "```"]
        finally:
            subprocess.run(
                [str(BIN / "kubecrew"), "sandbox", "down"],
                env=env,
                capture_output=True,
                check=False,
            )
    return "\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the page, write nothing")
    args = parser.parse_args()
    fresh = page()
    if not args.check:
        PAGE.write_text(fresh)
        print(f"wrote {PAGE.relative_to(ROOT)}")
        return 0
    committed = PAGE.read_text() if PAGE.exists() else ""
    if fresh == committed:
        return 0
    sys.stdout.writelines(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            fresh.splitlines(keepends=True),
            "docs/first-hour.md (committed)",
            "docs/first-hour.md (what the commands print today)",
        )
    )
    print("\nfirst-hour: the page is stale; run `.venv/bin/python scripts/first_hour.py`")
    return 1


if __name__ == "__main__":
    sys.exit(main())
