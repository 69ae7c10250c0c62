"""The `kubecrew` command line: one module per command group, wired together by `main`.

A command module parses its options, calls the work (in `channels/`, `demo/`, `install/`,
`practice/`, the agents or the core) and prints; it imports no other command module. Options and
output helpers several groups share live in `options`. Heavy engines are imported when a command
runs, so `kubecrew --help` stays quick.
"""
