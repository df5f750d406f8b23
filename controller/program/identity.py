"""The running release's identity for the install log (docs/program-verification.md "The
install log"): its version, the SHA-256 of its ``release.json`` and of its manifest.

A process started from a release (``program.origin``) names that release's files; a development
tree names the package's version and, if ``$TABLE_CONTROLLER_MANIFEST`` is set, that manifest.
Reading two small files: cheap enough for the start, never on the loop while it runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from controller.program.manifest import configured_manifest, sha256_file
from controller.program.origin import release_root

RELEASE_NAME = "release.json"


@dataclass(frozen=True)
class ReleaseIdentity:
    """What the install log journals at every start; two starts with equal identities ran the
    same release."""

    version: str
    release: str | None  # SHA-256 of release.json, None outside a release
    manifest: str | None  # SHA-256 of the manifest, None without one
    root: str | None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "version": self.version,
            "release": self.release,
            "manifest": self.manifest,
            "root": self.root,
        }

    def same_release(self, other: Mapping[str, object]) -> bool:
        """Whether a journaled identity names this release (the root may move)."""
        return all(other.get(k) == v for k, v in self.as_dict().items() if k != "root")

    def describe(self) -> str:
        """``0.1.0 release 1a2b... manifest 3c4d...`` for ``status`` and ``meters``."""
        short = {k: (v[:16] if v else "-") for k, v in (("r", self.release), ("m", self.manifest))}
        return f"{self.version} release {short['r']} manifest {short['m']}"


def running_identity() -> ReleaseIdentity:
    """The identity of the program this process runs."""
    root = release_root()
    version = _package_version()
    release_sha: str | None = None
    if root is not None and (root / RELEASE_NAME).is_file():
        path = root / RELEASE_NAME
        release_sha = sha256_file(path)
        try:
            version = str(json.loads(path.read_text(encoding="utf-8")).get("version", version))
        except (OSError, ValueError, AttributeError):
            pass
    manifest = configured_manifest()
    manifest_sha = sha256_file(manifest) if manifest is not None and manifest.is_file() else None
    return ReleaseIdentity(version, release_sha, manifest_sha, str(root) if root else None)


def _package_version() -> str:
    try:
        return metadata.version("table-controller")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        for line in (
            pyproject.read_text(encoding="utf-8").splitlines() if pyproject.is_file() else []
        ):
            if line.startswith("version = "):
                return line.split("=", 1)[1].strip().strip('"')
        return "unknown"
