"""Recheck installed models against the sha256 recorded in their sidecar at install time."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hub.errors import BadInputError
from hub.models.download import sha256_file
from hub.models.install import SIDECAR, models_dir, read_sidecar


@dataclass(frozen=True)
class VerifyReport:
    """The state of one installed model.

    Attributes:
        name: the model's name (its folder).
        path: the model's folder.
        problems: one entry per bad file, ``"<relpath>: missing"`` or
            ``"<relpath>: sha256 mismatch"``; empty when every file matches.
        verified_at_install: False when it was installed with ``--no-verify`` (its recorded
            hashes are then only what arrived).
    """

    name: str
    path: Path
    problems: tuple[str, ...]
    verified_at_install: bool = True

    @property
    def ok(self) -> bool:
        """True when every recorded file is present with its recorded sha256."""
        return not self.problems


def installed_names(directory: str | os.PathLike | None = None) -> list[str]:
    """Names of the models installed in the models folder (folders with a sidecar), sorted."""
    root = models_dir(directory)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and (p / SIDECAR).is_file())


def verify_installed(name: str, directory: str | os.PathLike | None = None) -> VerifyReport:
    """Hash every file recorded for installed model ``name`` and compare.

    Raises:
        BadInputError: ``name`` is not installed there (no folder or no readable sidecar).
    """
    folder = models_dir(directory) / name
    meta = read_sidecar(folder)
    if meta is None:
        raise BadInputError(f"{name} is not installed in {folder.parent}", node="models")
    problems = []
    for rel, digest in sorted(meta["files"].items()):
        path = folder / rel
        if ".." in Path(rel).parts or not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != digest:
            problems.append(f"{rel}: sha256 mismatch")
    return VerifyReport(name=name, path=folder, problems=tuple(problems),
                        verified_at_install=bool(meta.get("verified", True)))
