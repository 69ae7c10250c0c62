"""kubecrew: an intent-driven operations crew for Kubernetes, with a practice cluster built in.

This package is the front door, arranged by role:

    cli/        the `kubecrew` command line: one module per command group, thin (parse the
                options, call the work, print); `cli.main` wires them, `cli.options` holds
                the options several groups share
    channels/   where people talk to the crew: the front door every chat goes through
                (`frontdoor`), pull requests (`pr/`) and Slack (`slack/`)
    demo/       `kubecrew demo`: the scenes, their world and the steps they check
    evals/      the eval runner (scenario data stays at the root, `evals/scenarios/`)
    install/    `kubecrew install`: the crew's footprint on a cluster, a kubeconfig per agent
    practice/   the local sandbox as a client sees it: its home on disk, a probe of its API
    crew        the crew's configuration: options and crew.yaml -> an agent's servers
    terminal    the one-line failure every entry point ends with

It may import every other layer; nothing imports it. It reaches a cluster, real or sandbox, only
through a kubeconfig. Command modules import no other command module: what two commands share
lives in `cli.options` or in the package that owns the work.
"""
