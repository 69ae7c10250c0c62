#!/bin/sh
# System packages the tests need beyond the Python virtualenv: today only Prometheus, which the
# end-to-end scrape test runs for real. Idempotent and quiet: does nothing when `prometheus` is
# already on PATH. Debian/Ubuntu only (apt-get); needs root, or sudo without a password.
#
# The package's maintainer scripts would start a prometheus service. In a container without
# systemd, invoke-rc.d would fall back to the SysV script and leave a daemon on :9090, so the
# install runs behind a policy-rc.d that forbids starting services (removed again afterwards if
# we created it).
set -eu

if command -v prometheus >/dev/null 2>&1; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-deps: prometheus is missing and this is not a Debian-like system;" \
        "install Prometheus (2.x or newer) so that \`prometheus\` is on PATH." >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install-system-deps: installing prometheus needs root;" \
            "run: sudo apt-get install -y --no-install-recommends prometheus" >&2
        exit 1
    fi
fi

POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=""
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\n# written by kubecrew scripts/install-system-deps.sh\nexit 101\n' \
        | $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    CREATED_POLICY=yes
fi
cleanup() {
    if [ -n "$CREATED_POLICY" ]; then
        $SUDO rm -f "$POLICY"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM  # exit runs the EXIT trap

echo "install-system-deps: installing prometheus (apt-get)"
APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0"
INSTALL="install -y --no-install-recommends -o Dpkg::Options::=--force-confdef
    -o Dpkg::Options::=--force-confold prometheus"
# shellcheck disable=SC2086  # word splitting of $APT and $INSTALL is intended
if ! $APT $INSTALL >/dev/null 2>&1; then
    # Package lists missing or stale (fresh container images ship none): refresh once, retry.
    $APT update >/dev/null
    $APT $INSTALL >/dev/null
fi

command -v prometheus >/dev/null 2>&1 || {
    echo "install-system-deps: apt-get installed prometheus but it is not on PATH" >&2
    exit 1
}
