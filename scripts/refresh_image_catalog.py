"""Rewrite sandbox/kubelet/catalog/images.yaml from the registries' own tag lists.

For every repository the file already names (or those given with --only), ask its registry for
all its tags and write them back compactly by release series (`series.compact`), keeping the
repository's profile and size. Docker Hub repositories are read from Docker Hub's API
(`https://hub.docker.com/v2/repositories/library/NAME/tags?page_size=100`, page by page through
`next`), or with --oci from the distribution API of registry-1.docker.io; registry.k8s.io,
quay.io, ghcr.io and any other host through the OCI distribution API (`/v2/NAME/tags/list`,
following `Link: <...>; rel="next"`), with the anonymous bearer token the registry's
`WWW-Authenticate` challenge points to (auth.docker.io, ghcr.io/token...).

Tags no Linux node runs (Windows variants), date-stamped rebuilds (`jammy-20240911`) and
signature or attestation tags (`sha256-....sig`) are left out: they would only bloat the file.
If any registry does not answer, the script says which and writes nothing.

    .venv/bin/python scripts/refresh_image_catalog.py                 # every repository
    .venv/bin/python scripts/refresh_image_catalog.py --only nginx,redis
    .venv/bin/python scripts/refresh_image_catalog.py --dry-run       # counts, no write

Needs the network: it cannot run where the registries are unreachable (the sandbox's CI).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.kubelet.catalog import DATA, Entry, TagSet, compact, parse  # noqa: E402

FILE = ROOT / "sandbox" / "kubelet" / "catalog" / DATA
HUB = "https://hub.docker.com/v2/repositories"
TIMEOUT = 30
SKIP = re.compile(
    r"windowsservercore|nanoserver|ltsc20\d\d|(^|-)\d{8}(\.\d+)?($|-)|^sha256-|\.(sig|att|sbom)$"
)
HEADER = """\
# The image registries' repositories and tags the sandbox's simulated registries hold.
#
# Source: the registries' tag-list APIs (Docker Hub's /v2/repositories/.../tags, the OCI
# distribution /v2/NAME/tags/list of registry.k8s.io, quay.io, ghcr.io...), fetched by
# scripts/refresh_image_catalog.py on {date}; Windows, date-stamped and signature tags left out.
# Date of knowledge: {date}.
#
# Format (sandbox/kubelet/catalog/series.py): per repository, as people write it,
#   profile   the sandbox Profile its containers run (sandbox/kubelet/profiles.py)
#   size      compressed bytes a pull downloads
#   tags      literal tags, one string of words
#   groups    series tagged alike:
#     series    "1.27.0-5" is 1.27.0 to 1.27.5; "1.28.0", "22.04" or "21" one release
#     forms     "full minor major": 1.27.3, 1.27 and 1 (default "full")
#     variants  suffixes every form carries, "" the bare tag (default [""])
#     prefix    before the version ("v" for v1.31.0)
# Every value is quoted: YAML would read 3.10 as the number 3.1.
"""


class Unreachable(Exception):
    """The registry did not answer, or answered with an error."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated repositories to refresh")
    parser.add_argument("--oci", action="store_true", help="Docker Hub via registry-1.docker.io")
    parser.add_argument("--dry-run", action="store_true", help="print counts, write nothing")
    args = parser.parse_args(argv)
    current = parse(FILE.read_text(encoding="utf-8"))
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    refreshed: list[Entry] = []
    failed = 0
    for entry in current:
        if only and entry.repository not in only:
            refreshed.append(entry)
            continue
        try:
            tags = [
                tag for tag in list_tags(entry.repository, oci=args.oci) if not SKIP.search(tag)
            ]
        except Unreachable as exc:
            print(f"{entry.repository}: kept as it was ({exc})", file=sys.stderr)
            refreshed.append(entry)
            failed += 1
            continue
        tagset = compact(tags)
        print(f"{entry.repository}: {len(tags)} tags, {len(tagset.groups)} groups")
        refreshed.append(Entry(entry.repository, entry.profile, entry.size, tagset))
    if failed:
        print(f"{FILE.relative_to(ROOT)} not written: {failed} registries did not answer")
        return 1
    if not args.dry_run:
        date = datetime.date.today().isoformat()
        if only:
            date += f" ({', '.join(sorted(only))}; the others as the previous file had them)"
        FILE.write_text(render(refreshed, date=date), "utf-8")
        print(f"wrote {FILE.relative_to(ROOT)}: {len(refreshed)} repositories")
    return 0


# -- the registries -------------------------------------------------------------------------


def list_tags(repository: str, *, oci: bool = False) -> list[str]:
    host, path = split(repository)
    base = "https://registry-1.docker.io" if host == "docker.io" else f"https://{host}"
    try:
        return hub_tags(path) if host == "docker.io" and not oci else oci_tags(base, path)
    except urllib.error.HTTPError as exc:
        raise Unreachable(f"{exc.url}: HTTP {exc.code}") from exc


def split(repository: str) -> tuple[str, str]:
    """("docker.io", "library/nginx") for `nginx`, as a container runtime reads it."""
    first, sep, rest = repository.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "docker.io", repository if sep else f"library/{repository}"


def hub_tags(path: str) -> list[str]:
    tags: list[str] = []
    url: str | None = f"{HUB}/{path}/tags?page_size=100"
    while url:
        page = json.loads(fetch(url)[0])
        tags += [str(result["name"]) for result in page.get("results", [])]
        url = page.get("next")
    return tags


def oci_tags(base: str, path: str) -> list[str]:
    tags: list[str] = []
    token: str | None = None
    url: str | None = f"{base}/v2/{path}/tags/list?n=1000"
    while url:
        body, headers, token = fetch_authorized(url, token, scope=f"repository:{path}:pull")
        tags += [str(tag) for tag in (json.loads(body).get("tags") or [])]
        url = next_link(headers.get("Link", ""), base)
    return tags


def fetch_authorized(url: str, token: str | None, *, scope: str) -> tuple[bytes, Any, str | None]:
    """GET `url`, answering a Bearer challenge with an anonymous token from its realm."""
    try:
        body, headers = fetch(url, token=token)
        return body, headers, token
    except urllib.error.HTTPError as exc:
        challenge = exc.headers.get("WWW-Authenticate", "") if exc.code == 401 else ""
        if not challenge.lower().startswith("bearer "):
            raise Unreachable(f"{url}: HTTP {exc.code}") from exc
    token = anonymous_token(challenge, scope)
    body, headers = fetch(url, token=token)
    return body, headers, token


def anonymous_token(challenge: str, scope: str) -> str:
    fields = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    if "realm" not in fields:
        raise Unreachable(f"a Bearer challenge without a realm: {challenge}")
    query = {"service": fields.get("service", ""), "scope": fields.get("scope", scope)}
    answer = json.loads(fetch(f"{fields['realm']}?{urllib.parse.urlencode(query)}")[0])
    token = answer.get("token") or answer.get("access_token")
    if not token:
        raise Unreachable(f"no token from {fields['realm']}")
    return str(token)


def next_link(link: str, base: str) -> str | None:
    found = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', link)
    return urllib.parse.urljoin(base, found.group(1)) if found else None


def fetch(url: str, *, token: str | None = None) -> tuple[bytes, Any]:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.read(), response.headers
    except urllib.error.HTTPError:
        raise  # the caller may answer a challenge
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise Unreachable(f"{url}: {exc}") from exc


# -- the file ---------------------------------------------------------------------------------


def render(entries: list[Entry], *, date: str) -> str:
    """The data file: the header, then each repository as the hand-written file lays it out."""
    lines = [HEADER.format(date=date).rstrip("\n"), "repositories:"]
    for entry in entries:
        lines += [f"  {entry.repository}:", f"    profile: {entry.profile}"]
        lines.append(f"    size: {entry.size}")
        lines += _tagset(entry.tags)
    return "\n".join(lines) + "\n"


def _tagset(tags: TagSet) -> list[str]:
    data = tags.to_data()
    lines = [f"    tags: {json.dumps(data['tags'])}"] if "tags" in data else []
    if data.get("groups"):
        lines.append("    groups:")
    for group in data.get("groups", []):
        lines.append(f"      - series: {json.dumps(group['series'])}")
        for key in ("forms", "variants", "prefix"):
            if key in group:
                lines.append(f"        {key}: {json.dumps(group[key])}")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
