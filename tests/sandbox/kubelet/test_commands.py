"""Command and args interpretation: what a container's process visibly does."""

from __future__ import annotations

import pytest

from sandbox.kubelet.commands import FOREVER, interpret


@pytest.mark.parametrize(
    ("container", "seconds", "code"),
    [
        ({"command": ["sleep", "30"]}, 30.0, 0),
        ({"command": ["sleep", "infinity"]}, FOREVER, 0),
        ({"command": ["sh", "-c", "exit 3"]}, 0.0, 3),
        ({"command": ["/bin/sh", "-c", "sleep 2 && false"]}, 2.0, 1),
        ({"command": ["bash", "-c", "false || echo recovered"]}, 0.0, 0),
        ({"command": ["sh", "-c", "while true; do echo tick; sleep 5; done"]}, FOREVER, 0),
        ({"args": ["sleep", "10"]}, 10.0, 0),
        ({"command": ["true"]}, 0.0, 0),
        ({"command": ["sh", "-c", "tail -f /dev/null"]}, FOREVER, 0),
    ],
    ids=[
        "sleep",
        "sleep-infinity",
        "exit",
        "and-chain",
        "or-chain",
        "loop",
        "args",
        "true",
        "tail",
    ],
)
def test_shell_shapes_run_for_their_time_and_exit_code(
    container: dict[str, list[str]], seconds: float | None, code: int
) -> None:
    plan = interpret(container)
    assert not plan.own_process and not plan.start_error
    assert plan.seconds == seconds and plan.exit_code == code


def test_echo_lines_are_timed_and_loops_repeat() -> None:
    plan = interpret({"command": ["sh", "-c", "echo one; sleep 3; echo two"]})
    assert plan.lines == ((0.0, "one"), (3.0, "two"))
    loop = interpret({"command": ["sh", "-c", "while true; do echo tick; sleep 5; done"]})
    assert loop.loop == ("tick",) and loop.loop_period == 5.0


def test_unknown_binary_cannot_start_but_inside_a_shell_exits_127() -> None:
    direct = interpret({"command": ["nginxx"]})
    assert 'exec: "nginxx": executable file not found in $PATH' in direct.start_error
    shell = interpret({"command": ["sh", "-c", "nginxx"]})
    assert shell.exit_code == 127 and shell.lines == ((0.0, "sh: nginxx: not found"),)


def test_the_images_own_program_leaves_behaviour_to_the_profile() -> None:
    assert interpret({}).own_process
    assert interpret({"command": ["nginx", "-g", "daemon off;"]}).own_process
    assert interpret({"args": ["--maxmemory", "100mb"]}).own_process
    server = interpret({"command": ["python", "-m", "http.server", "9000"]})
    assert server.ports == (9000,) and server.seconds is FOREVER
