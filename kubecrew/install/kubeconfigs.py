"""An agent's kubeconfig: a bounded ServiceAccount token, and the installer's server and CA.

`refresh` asks the cluster for a token (TokenRequest on `serviceaccounts/<agent>/token`) and
writes `<agent>.yaml` with mode 0600 (atomically: an agent reading it mid-write sees the old
file or the new one), unless the file already there is still good: same cluster entry, a token
the cluster still accepts as that ServiceAccount (a SelfSubjectReview made with the file itself),
and at least half its lifetime left on the cluster's clock. Keeping it is what lets a second
`kubecrew install` change nothing.

Tokens are read only to learn their times (`iat`, `exp`: the JWT's public claims, never its
signature) and are never printed: `Written` holds the path and the expiry, not the token.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from kubernetes.config.config_exception import ConfigException

from core.connection import Api, Clusters, Json
from core.errors import ToolError

TOKEN_API = "authentication.k8s.io/v1"
WHO_AM_I = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


@dataclass(frozen=True)
class Written:
    agent: str
    path: Path
    kept: bool  # the file already there was still good
    expires: str  # when its token expires (RFC 3339, the cluster's clock)

    def line(self) -> str:
        verb = "kept" if self.kept else "wrote"
        return f"{verb:<16} {self.path} (token valid until {self.expires})"


def refresh(api: Api, namespace: str, agent: str, path: Path, *, hours: int) -> Written:
    """`path` holding a working kubeconfig for ServiceAccount `namespace/agent`."""
    token, expires = request_token(api, namespace, agent, seconds=hours * 3600)
    cluster = cluster_entry(api)
    kept = _kept_expiry(path, cluster, f"system:serviceaccount:{namespace}:{agent}", token)
    if kept is not None:
        return Written(agent, path, True, kept)
    write(path, render(api.context, cluster, agent, token))
    return Written(agent, path, False, expires)


def request_token(api: Api, namespace: str, agent: str, *, seconds: int) -> tuple[str, str]:
    """A new token for the ServiceAccount and its expiry; the API server may shorten it."""
    body = {"apiVersion": TOKEN_API, "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    answer = api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{agent}/token",
        body=body,
        what=f"a token for ServiceAccount {namespace}/{agent}",
    )
    status = answer.get("status") or {}
    return str(status.get("token") or ""), str(status.get("expirationTimestamp") or "")


def cluster_entry(api: Api) -> Json:
    """The installer's cluster as a kubeconfig `cluster`: server, CA (embedded), TLS options."""
    conf = api.client.configuration
    entry: Json = {"server": str(conf.host)}
    if conf.ssl_ca_cert:
        ca = Path(conf.ssl_ca_cert).read_bytes()
        entry["certificate-authority-data"] = base64.b64encode(ca).decode("ascii")
    if not conf.verify_ssl:
        entry["insecure-skip-tls-verify"] = True
    if getattr(conf, "tls_server_name", None):
        entry["tls-server-name"] = str(conf.tls_server_name)
    if conf.proxy:
        entry["proxy-url"] = str(conf.proxy)
    return entry


def render(cluster_name: str, cluster: Json, agent: str, token: str) -> str:
    name = f"kubecrew-{agent}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [
            {
                "name": name,
                "context": {"cluster": cluster_name, "user": name, "namespace": "default"},
            }
        ],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: Path, text: str) -> None:
    """Replace `path` with `text`, mode 0600, in its directory (0700 when created here)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def _kept_expiry(path: Path, cluster: Json, username: str, fresh_token: str) -> str | None:
    """The expiry of the token in `path` when the file is worth keeping, else None."""
    try:
        config = yaml.safe_load(path.read_text())
        old_cluster = config["clusters"][0]["cluster"]
        old_token = str(config["users"][0]["user"]["token"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return None
    fresh, old = claims(fresh_token), claims(old_token)
    issued, lifetime_end, old_end = fresh.get("iat"), fresh.get("exp"), old.get("exp")
    if old_cluster != cluster or not (
        isinstance(issued, int) and isinstance(lifetime_end, int) and isinstance(old_end, int)
    ):
        return None
    # Half a lifetime left, on the cluster's clock: `issued` is its now.
    if old_end - issued < (lifetime_end - issued) / 2 or whoami(path) != username:
        return None
    return datetime.fromtimestamp(old_end, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def whoami(kubeconfig: Path) -> str | None:
    """The username the cluster sees for `kubeconfig`'s credentials, or None if it refuses them."""
    clusters = Clusters(kubeconfig=kubeconfig)
    try:
        review = {"apiVersion": TOKEN_API, "kind": "SelfSubjectReview"}
        answer = clusters.api().request("POST", WHO_AM_I, body=review)
    except (ToolError, ConfigException, OSError):
        return None
    finally:
        clusters.close()
    user = ((answer.get("status") or {}).get("userInfo") or {}).get("username")
    return str(user) if user else None


def claims(token: str) -> dict[str, Any]:
    """A JWT's claims, unverified (only the cluster verifies); {} for anything else."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        found = json.loads(raw)
    except (binascii.Error, ValueError):
        return {}
    return found if isinstance(found, dict) else {}
