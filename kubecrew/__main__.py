"""The `kubecrew` command (and `python -m kubecrew`): the command line, and Ctrl-C at any moment.

The command line itself is `kubecrew.cli.main.app`; it is imported here, inside the handler,
so that Ctrl-C while it loads (a second or so of imports) ends the command like Ctrl-C at any
other moment: one line and the shell's usual status for it, 130, never a traceback. A command
that runs until Ctrl-C (`watch`, `run`, `sandbox up`) handles it itself and exits 0.
"""

from __future__ import annotations

import sys

INTERRUPTED = 130  # 128 + SIGINT, as shells report a command Ctrl-C ended


def main() -> None:
    try:
        if _plain_kube_server(sys.argv[1:]):
            return
        from kubecrew.cli.main import app

        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(INTERRUPTED)
    except SystemExit as end:
        if end.code == INTERRUPTED:  # Typer's end of a Ctrl-C in its own frames: silent, 130
            sys.stderr.write("interrupted\n")
        raise


def _plain_kube_server(args: list[str]) -> bool:
    """`kubecrew mcp kube` over stdio with plain options is `python -m mcp_servers.kube`: served
    without loading the command line, so an MCP host's start is answered in milliseconds."""
    if args[:2] != ["mcp", "kube"]:
        return False
    from mcp_servers.kube.__main__ import main as kube_server
    from mcp_servers.kube.__main__ import plain

    if not plain(args[2:]):
        return False
    kube_server(args[2:])
    return True


if __name__ == "__main__":
    main()
