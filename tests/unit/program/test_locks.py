"""The release's locks cover pyproject.toml: every dependency and release extra, for each
architecture, is pinned at a version its specifier allows. Someone who adds a dependency
without `scripts/build-release --lock` would ship a release that cannot import it."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[3]


@functools.cache
def build_release() -> ModuleType:
    """scripts/build-release as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader(
        "build_release", str(REPO / "scripts" / "build-release")
    )
    spec = importlib.util.spec_from_loader("build_release", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_release"] = module  # its dataclasses look their module up
    loader.exec_module(module)
    return module


@pytest.mark.parametrize("arch", ["amd64", "arm64"])
def test_every_requirement_is_pinned_in_the_lock(arch: str) -> None:
    br = build_release()
    target = br.ARCHES[arch]
    pinned = {canonicalize_name(w.name): w.version for w in br.read_wheel_lock(target)}
    for text in br.requirements_for(target):
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in pinned, (
            f"{req.name} is not in requirements/release-{arch}.lock:"
            " run scripts/build-release --lock"
        )
        assert req.specifier.contains(pinned[name], prereleases=True), (
            f"{req.name}=={pinned[name]} does not satisfy {req.specifier}: run --lock"
        )


def test_the_interpreter_is_one_debian_version_for_both_architectures() -> None:
    br = build_release()
    versions = {d.version for arch in br.ARCHES.values() for d in br.read_debian_lock(arch)}
    assert len(versions) == 1, versions
