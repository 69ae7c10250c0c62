"""`curl` (8.x, as in curlimages/curl) against a `nettools.Network`: what it prints and returns.

Exit codes and messages are curl's: 6 "Could not resolve host", 7 "Failed to connect ... Could
not connect to server" (refused), 28 on `-m/--max-time` or a connect that never completes
(`--connect-timeout`, else curl's own 300 s), 52 "Empty reply from server" from a port that
speaks no HTTP, 22 "The requested URL returned error: 404" with `-f` on a status >= 400 (without
`-f` a 404 is a success and its body is printed). The body goes to stdout unless `-o` sends it
elsewhere; `-w` is written after the transfer, failed or not (`%{http_code}` is 000 when no
response came). Without `-s` the progress meter goes to stderr, as it does when stdout is not a
terminal; `-S` brings error messages back under `-s`. `-I` prints the response headers.
"""

from __future__ import annotations

import re

from sandbox.kubelet.nettools import (
    REASONS,
    Chunk,
    Listener,
    Network,
    Result,
    Target,
    body,
    lines,
    parse,
    seconds,
    target,
)

CONNECT_DEFAULT = 300.0  # curl's own connect timeout when none is given
_IGNORED = """-H --header -X --request -d --data --data-raw --data-binary -A --user-agent -u --user
    -e --referer --retry --retry-delay --retry-max-time --resolve -x --proxy --cacert -E --cert
    --key -b --cookie -c --cookie-jar -F --form -T --upload-file -K --config"""
VALUED = {
    "-o": "output",
    "--output": "output",
    "-w": "write-out",
    "--write-out": "write-out",
    "-m": "max-time",
    "--max-time": "max-time",
    "--connect-timeout": "connect-timeout",
    "--url": "url",
    **dict.fromkeys(_IGNORED.split(), "ignored"),
}
FLAGS = {
    "-f": "fail",
    "--fail": "fail",
    "--fail-with-body": "fail-body",
    "-s": "silent",
    "--silent": "silent",
    "-S": "show-error",
    "--show-error": "show-error",
    "-I": "head",
    "--head": "head",
}
_METER = (
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
    "                                 Dload  Upload   Total   Spent    Left  Speed\n"
)


def curl(args: list[str], network: Network) -> Result:
    options = parse(args, valued=VALUED, flags=FLAGS)
    urls = ([options.values["url"]] if "url" in options.values else []) + options.words
    if not urls:
        said = ("curl: no URL specified", "curl: try 'curl --help' for more information")
        return Result(said, 0.0, 2)
    chunks: list[Chunk] = []
    took, code = 0.0, 0
    for url in urls:
        transfer = _Transfer(url, options.values)
        transfer.run(network)
        chunks.extend(transfer.output())
        took, code = took + transfer.seconds, transfer.code
    return Result(lines(chunks), took, code, tuple(chunks))


class _Transfer:
    """One URL fetched: what came back, how long it took, and how curl reports it."""

    def __init__(self, url: str, options: dict[str, str]) -> None:
        self.url, self.options = url, options
        self.target = target(url)
        self.status, self.body, self.seconds, self.code = 0, "", 0.0, 0
        self.error, self.address = "", ""

    def run(self, network: Network) -> None:
        if isinstance(self.target, str):
            self.code = 1 if self.target.startswith("Protocol") else 3
            self.error = self.target
            return
        self.address = network.resolve(self.target.host) or ""
        if not self.address:
            self.code, self.error = 6, f"Could not resolve host: {self.target.host}"
            return
        dial = network.connect(self.address, self.target.port)
        failed = f"Failed to connect to {self.target.host} port {self.target.port} after"
        limit = seconds(self.options.get("max-time"))
        if dial == "refused":
            self.code, self.error = 7, f"{failed} 0 ms: Could not connect to server"
        elif dial == "unreachable":
            wait = seconds(self.options.get("connect-timeout")) or CONNECT_DEFAULT
            self.seconds, self.code = min(wait, limit or wait), 28
            self.error = f"{failed} {int(self.seconds * 1000) + 2} ms: Timeout was reached"
        elif not dial.http:
            self.code, self.error = 52, "Empty reply from server"
        elif limit is not None and dial.latency > limit:
            self.seconds, self.code = limit, 28
            self.error = (
                f"Operation timed out after {int(limit * 1000) + 1} milliseconds with 0 bytes "
                "received"
            )
        else:
            self._answered(dial, self.target)

    def _answered(self, listener: Listener, where: Target) -> None:
        self.seconds = listener.latency
        self.status = listener.answer(where.path)
        self.body = body(self.status, where.path)
        if self.status >= 400 and ("fail" in self.options or "fail-body" in self.options):
            self.code, self.error = 22, f"The requested URL returned error: {self.status}"

    def output(self) -> list[Chunk]:
        chunks: list[Chunk] = []
        silent = "silent" in self.options
        if not silent:
            chunks.append(("err", _METER))
        printed = self.code == 0 or "fail-body" in self.options
        if self.status and printed and "output" not in self.options:
            shown = _headers(self.status, self.body) if "head" in self.options else self.body
            chunks.append(("out", shown))
        if not silent:
            chunks.append(("err", _meter_line(len(self.body)) + ("" if self.error else "\n")))
        if self.error and (not silent or "show-error" in self.options):
            chunks.append(("err", f"curl: ({self.code}) {self.error}\n"))
        if "write-out" in self.options:
            chunks.append(("out", self._write_out(self.options["write-out"])))
        return chunks

    def _write_out(self, template: str) -> str:
        port = "" if isinstance(self.target, str) else str(self.target.port)
        values = {
            "http_code": f"{self.status:03d}",
            "response_code": f"{self.status:03d}",
            "exitcode": str(self.code),
            "url_effective": self.url,
            "url": self.url,
            "remote_ip": self.address,
            "remote_port": port,
            "time_total": f"{self.seconds:.6f}",
            "size_download": str(len(self.body) if self.code == 0 else 0),
            "errormsg": self.error,
        }
        text = template.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "")
        text = re.sub(r"%\{([a-z_]+)\}", lambda m: values.get(m.group(1), ""), text)
        return text.replace("%%", "%")


def _meter_line(received: int) -> str:
    done = "100" if received else "  0"
    speed = received * 40
    return (
        f"{done} {received:>5}  {done} {received:>5}    0     0  {speed:>5}      0 "
        f"--:--:-- --:--:-- --:--:-- {speed:>5}"
    )


def _headers(status: int, text: str) -> str:
    return (
        f"HTTP/1.1 {status} {REASONS.get(status, '')}\nContent-Type: text/plain; charset=utf-8\n"
        f"Content-Length: {len(text)}\n\n"
    )
