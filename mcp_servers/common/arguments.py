"""Checks on tool arguments before anything reaches a cluster, a shell-free git or a query.

Names and namespaces are DNS labels or subdomains; label and field selectors use only the
characters their grammars allow. Anything else (a `;`, `$(`, a backtick, a newline, `..`) is
refused with InvalidArgument naming the argument: no tool ever builds a command line, but a
refused argument is also never echoed into an API path or a log unescaped.
"""

from __future__ import annotations

import re

from core.errors import InvalidArgument

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SELECTOR = re.compile(r"^[A-Za-z0-9_.\-/=!,() ]*$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9.\-/]*$")


def name(value: str, *, argument: str = "name") -> str:
    if not value or len(value) > 253 or not _SUBDOMAIN.match(value):
        raise InvalidArgument(
            f"{argument} {value!r} is not a valid Kubernetes name (lower-case letters, digits, "
            "'-' and '.', at most 253 characters)"
        )
    return value


def namespace(value: str, *, argument: str = "namespace") -> str:
    if not value or len(value) > 63 or not _LABEL.match(value):
        raise InvalidArgument(
            f"{argument} {value!r} is not a valid namespace (a DNS label: lower-case letters, "
            "digits and '-', at most 63 characters)"
        )
    return value


def selector(value: str, *, argument: str = "selector") -> str:
    if len(value) > 1024 or not _SELECTOR.match(value) or "\n" in value:
        raise InvalidArgument(
            f"{argument} {value!r} has characters a Kubernetes selector cannot contain"
        )
    return value


def kind(value: str, *, argument: str = "kind") -> str:
    if not value or len(value) > 253 or not _KIND.match(value):
        raise InvalidArgument(f"{argument} {value!r} is not a resource kind or name")
    return value
