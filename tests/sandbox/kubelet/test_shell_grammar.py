"""One shell grammar, two shells: a script means the same as a container's command (its log
over time) and in an exec (its stdout, stderr and status), as BusyBox sh runs it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from sandbox.kubelet.commands import FOREVER, Inside, Plan, interpret
from sandbox.kubelet.coreutils import Box, Stdio, TextInput
from sandbox.kubelet.filesystem import ContainerFiles
from sandbox.kubelet.nettools import Dial
from sandbox.kubelet.shell import Shell

FILES = ContainerFiles(
    {"/etc/hostname": "web\n", "/etc/config/x": "from-config\n", "/etc/config/y": "other\n"},
    {"/tmp"},
)
ENV = {"HOME": "/root", "MODE": "prod"}


class Nowhere:
    def resolve(self, host: str) -> str | None:
        return None

    def connect(self, address: str, port: int) -> Dial:
        return "unreachable"

    def lookup(self, host: str) -> tuple[str, str] | None:
        return None


def container(script: str) -> Plan:
    return interpret({"command": ["sh", "-c", script]}, inside=Inside(FILES, ENV))


def exec_sh(script: str) -> tuple[int, str, str]:
    out: list[str] = []
    err: list[str] = []

    async def write_out(text: str) -> None:
        out.append(text)

    async def write_err(text: str) -> None:
        err.append(text)

    async def no_wait(_: float) -> None:
        return None

    box = Box(FILES, dict(ENV), Nowhere(), "web", datetime(2026, 1, 1, tzinfo=UTC), no_wait)
    io = Stdio(TextInput(), write_out, write_err)
    code = asyncio.run(Shell(box).exec_argv(["sh", "-c", script], io))
    return code, "".join(out), "".join(err)


SCRIPTS = [
    pytest.param(
        "if [ -f /etc/hostname ]; then echo has-host; else echo none; fi",
        "has-host\n",
        0,
        id="if-else-runs-one-branch",
    ),
    pytest.param('echo "host is $(hostname)"', "host is web\n", 0, id="command-substitution"),
    pytest.param("echo `echo back` ticks", "back ticks\n", 0, id="backticks"),
    pytest.param(
        'for i in 1 2 3; do echo "$i squared is $((i * i))"; done',
        "1 squared is 1\n2 squared is 4\n3 squared is 9\n",
        0,
        id="for-with-arithmetic",
    ),
    pytest.param(
        "for m in prod dev x; do case $m in prod|staging) echo live;; d*) echo test;;"
        ' *) echo "other $m";; esac; done',
        "live\ntest\nother x\n",
        0,
        id="case-with-globs",
    ),
    pytest.param(
        'i=0; while true; do i=$((i+1)); if [ $i -ge 3 ]; then echo "stop at $i"; break; fi;'
        " done; echo after",
        "stop at 3\nafter\n",
        0,
        id="if-inside-while-with-break",
    ),
    pytest.param(
        'v="$(cat /etc/config/x)"; echo "got $v"', "got from-config\n", 0, id="cat-config"
    ),
    pytest.param(
        'echo "${UNSET:-default} ${MODE:-default} ${#MODE} ${N:=5} $N"',
        "default prod 4 5 5\n",
        0,
        id="parameter-operators",
    ),
    pytest.param(
        "if true; then echo leaving; exit 4; fi; echo never", "leaving\n", 4, id="exit-in-if"
    ),
    pytest.param(
        "n=3; until [ $n -eq 0 ]; do echo $n; n=$((n-1)); done", "3\n2\n1\n", 0, id="until"
    ),
    pytest.param(
        'greet() { echo "hi $1"; return 3; }; greet you; echo $?', "hi you\n3\n", 0, id="function"
    ),
    pytest.param("echo /etc/config/*", "/etc/config/x /etc/config/y\n", 0, id="glob"),
    pytest.param(
        'words="a b  c"; for w in $words; do echo "[$w]"; done', "[a]\n[b]\n[c]\n", 0, id="split"
    ),
    pytest.param('(A=1; exit 3); echo "$? ${A:-unset}"', "3 unset\n", 0, id="subshell"),
    pytest.param("! false && echo negated", "negated\n", 0, id="negation"),
    pytest.param("f=/a/b.tar.gz; echo ${f##*/} ${f%.gz}", "b.tar.gz /a/b.tar\n", 0, id="trim"),
]


@pytest.mark.parametrize(("script", "out", "code"), SCRIPTS)
def test_exec_runs_the_script_as_busybox_sh(script: str, out: str, code: int) -> None:
    assert exec_sh(script) == (code, out, "")


@pytest.mark.parametrize(("script", "out", "code"), SCRIPTS)
def test_a_container_logs_what_the_exec_prints(script: str, out: str, code: int) -> None:
    plan = container(script)
    assert [line for _, line in plan.lines] == out.splitlines()
    assert (plan.seconds, plan.exit_code) == (0.0, code)


def test_tick_loop_counts_up_every_two_seconds_forever() -> None:
    plan = container('i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 2; done')
    assert plan.seconds is FOREVER
    assert plan.lines[:3] == ((0.0, "tick 0"), (2.0, "tick 1"), (4.0, "tick 2"))


def test_if_then_sleep_logs_only_the_branch_taken() -> None:
    plan = container("if [ -f /etc/hostname ]; then echo has-host; else echo none; fi; sleep 3600")
    assert plan.lines == ((0.0, "has-host"),) and plan.seconds == 3600.0


def test_a_loop_that_repeats_its_state_becomes_a_periodic_plan() -> None:
    plan = container("echo start; while :; do echo beat; sleep 3; done")
    assert plan.lines == ((0.0, "start"),)
    assert (plan.loop, plan.loop_period, plan.seconds) == (("beat",), 3.0, FOREVER)


UNTERMINATED = 'sh: syntax error: unexpected end of file (expecting "fi")'


def test_an_unterminated_if_is_a_syntax_error_in_exec_and_container() -> None:
    assert exec_sh("if true; then echo x") == (2, "", UNTERMINATED + "\n")
    plan = container("if true; then echo x")
    assert plan.lines == ((0.0, UNTERMINATED),) and plan.exit_code == 2


@pytest.mark.parametrize(
    ("script", "message"),
    [
        pytest.param("echo $((1 / 0))", "sh: divide by zero", id="divide-by-zero"),
        pytest.param(
            "i=0; while true; do i=$((i+1)); done",
            "sh: sandbox: a loop ran 10000 times without pausing; script stopped",
            id="runaway-loop",
        ),
        pytest.param(
            "f() { f; }; f",
            "sh: sandbox: nested deeper than 50 levels; script stopped",
            id="runaway-recursion",
        ),
        pytest.param(
            'x=$(echo "$(echo "$(echo)")"); echo ${x:?is empty}',
            "sh: x: is empty",
            id="unset-error",
        ),
    ],
)
def test_failures_and_caps_end_the_script_as_a_failing_shell(script: str, message: str) -> None:
    code, out, err = exec_sh(script)
    assert (code, out, err) == (2, "", message + "\n")
    plan = container(script)
    assert plan.exit_code == 2 and plan.lines[-1] == (0.0, message)


def test_exec_keeps_stdin_for_read_loops_and_pipes() -> None:
    script = "printf 'a 1\\nb 2\\n' | while read k v; do echo \"$v=$k\"; done; cat /nope 2>&1"
    assert exec_sh(script) == (
        1,
        "1=a\n2=b\ncat: can't open '/nope': No such file or directory\n",
        "",
    )


def test_heredocs_are_refused_as_not_simulated() -> None:
    code, _, err = exec_sh("cat <<EOF\nhi\nEOF")
    assert code == 2 and "here-documents (<<) are not simulated" in err
