#!/bin/sh
# System packages the tests need beyond the Python virtualenv: Prometheus, which the end-to-end
# scrape tests run for real, and PostgreSQL, which backs the tests of the state the crew's
# replicas share (tests/support/postgres.py starts its own server with `initdb` and `pg_ctl`).
# Idempotent and quiet: does nothing when `prometheus` is on PATH and an `initdb` is found (on
# PATH, or in Debian's /usr/lib/postgresql/*/bin, where its package puts it). Debian/Ubuntu only
# (apt-get); needs root, or sudo without a password.
#
# The packages' maintainer scripts would start a prometheus service and PostgreSQL's default
# cluster. In a container without systemd, invoke-rc.d would fall back to the SysV scripts and
# leave daemons on :9090 and :5432, so the install runs behind a policy-rc.d that forbids
# starting services (removed again afterwards if we created it).
set -eu

has_initdb() {
    command -v initdb >/dev/null 2>&1 && return 0
    for found in /usr/lib/postgresql/*/bin/initdb; do
        [ -x "$found" ] && return 0
    done
    return 1
}

MISSING=""
command -v prometheus >/dev/null 2>&1 || MISSING="prometheus"
has_initdb || MISSING="${MISSING:+$MISSING }postgresql"
if [ -z "$MISSING" ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-system-deps: missing $MISSING and this is not a Debian-like system;" \
        "install Prometheus (2.x or newer) so that \`prometheus\` is on PATH, and" \
        "PostgreSQL (13 or newer) so that \`initdb\` is on PATH." >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install-system-deps: installing $MISSING needs root;" \
            "run: sudo apt-get install -y --no-install-recommends $MISSING" >&2
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

echo "install-system-deps: installing $MISSING (apt-get)"
APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0"
INSTALL="install -y --no-install-recommends -o Dpkg::Options::=--force-confdef
    -o Dpkg::Options::=--force-confold $MISSING"
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
has_initdb || {
    echo "install-system-deps: apt-get installed postgresql but no initdb is on PATH" \
        "nor in /usr/lib/postgresql/*/bin" >&2
    exit 1
}
