"""The model manifest: which models ``hub models fetch`` can install, from where, and their hashes.

The one copy of the data is ``hub/data/models.toml`` (the repo's ``models/manifest.toml`` links to
it). Another manifest can be used with ``--manifest FILE`` or ``$HUB_MODELS_MANIFEST`` (tests do).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hub.errors import ConfigError
from hub.paths import DATA_DIR, read_user_text

DEFAULT_MANIFEST = DATA_DIR / "models.toml"
UNKNOWN_SHA256 = "unknown"
KINDS = ("asr", "llm", "tts")
INSTALLS = ("unzip", "file")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_MODEL_KEYS = {"name", "kind", "license", "install", "entry", "description", "file"}
_FILE_KEYS = {"url", "sha256", "size", "filename"}


@dataclass(frozen=True)
class ModelFile:
    """One download of a model.

    Attributes:
        url: http(s) URL of the file.
        sha256: lower-case hex digest, or ``"unknown"``.
        size: length in bytes (0 when unknown).
        filename: name the file is saved under (no folders).
    """

    url: str
    sha256: str
    size: int
    filename: str

    @property
    def known_hash(self) -> bool:
        """True when the manifest gives a real sha256 for this file."""
        return self.sha256 != UNKNOWN_SHA256


@dataclass(frozen=True)
class Model:
    """One installable model.

    Attributes:
        name: what ``hub models fetch NAME`` takes; also the folder it is installed in.
        kind: ``asr``, ``llm`` or ``tts``.
        license: the licence as the publisher states it.
        install: ``unzip`` (one archive, unpacked) or ``file`` (files kept as downloaded).
        entry: path inside the installed folder that :func:`installed_path` returns.
        files: the downloads, in order.
        description: one line for ``hub models list``.
    """

    name: str
    kind: str
    license: str
    install: str
    entry: str
    files: tuple[ModelFile, ...]
    description: str = ""

    @property
    def size(self) -> int:
        """Total download size in bytes."""
        return sum(f.size for f in self.files)


def manifest_path(explicit: str | os.PathLike | None = None) -> Path:
    """The manifest to read: ``explicit``, else ``$HUB_MODELS_MANIFEST``, else the packaged one."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("HUB_MODELS_MANIFEST")
    return Path(env) if env else DEFAULT_MANIFEST


def _filename_from_url(url: str) -> str:
    """The last part of the URL's path (``.../a/b.zip?x=1`` -> ``b.zip``)."""
    return unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])


def _check(cond: bool, path: str, message: str) -> None:
    """Raise ConfigError ``"<path>: <message>"`` unless ``cond``."""
    if not cond:
        raise ConfigError(f"{path}: {message}", node="models")


def _parse_file(table: dict, path: str) -> ModelFile:
    """Build a ModelFile from one ``[[model.file]]`` table, checking every key."""
    _check(isinstance(table, dict), path, "expected a table")
    unknown = sorted(set(table) - _FILE_KEYS)
    _check(not unknown, f"{path}.{unknown[0] if unknown else ''}", "unknown key")
    url = table.get("url")
    _check(isinstance(url, str) and urlsplit(url).scheme in ("http", "https"), f"{path}.url",
           "expected an http(s) URL")
    sha = str(table.get("sha256", "")).lower()
    _check(sha == UNKNOWN_SHA256 or bool(_SHA_RE.match(sha)), f"{path}.sha256",
           'expected 64 hex digits or "unknown"')
    size = table.get("size", 0)
    _check(isinstance(size, int) and not isinstance(size, bool) and size >= 0, f"{path}.size",
           "expected a byte count")
    filename = table.get("filename") or _filename_from_url(url)
    _check(isinstance(filename, str) and "/" not in filename and filename not in ("", ".", ".."),
           f"{path}.filename", "expected a plain file name")
    return ModelFile(url=url, sha256=sha, size=size, filename=filename)


def _parse_model(table: dict, path: str) -> Model:
    """Build a Model from one ``[[model]]`` table, checking every key."""
    _check(isinstance(table, dict), path, "expected a table")
    unknown = sorted(set(table) - _MODEL_KEYS)
    _check(not unknown, f"{path}.{unknown[0] if unknown else ''}", "unknown key")
    name = table.get("name")
    _check(isinstance(name, str) and bool(_NAME_RE.match(name)), f"{path}.name",
           "expected letters, digits, '.', '_' or '-'")
    _check(table.get("kind") in KINDS, f"{path}.kind", f"expected one of {', '.join(KINDS)}")
    _check(table.get("install") in INSTALLS, f"{path}.install",
           f"expected one of {', '.join(INSTALLS)}")
    raw_files = table.get("file")
    _check(isinstance(raw_files, list) and bool(raw_files), f"{path}.file",
           "expected at least one [[model.file]]")
    files = tuple(_parse_file(t, f"{path}.file[{i}]") for i, t in enumerate(raw_files))
    _check(table["install"] != "unzip" or len(files) == 1, f"{path}.file",
           "an unzip model has exactly one file")
    _check(len({f.filename for f in files}) == len(files), f"{path}.file", "file names repeat")
    entry = table.get("entry", ".")
    _check(isinstance(entry, str) and not Path(entry).is_absolute() and ".." not in
           Path(entry).parts, f"{path}.entry", "expected a relative path inside the model")
    return Model(name=name, kind=table["kind"], license=str(table.get("license", "")),
                 install=table["install"], entry=entry, files=files,
                 description=str(table.get("description", "")))


def load_manifest(path: str | os.PathLike | None = None) -> dict[str, Model]:
    """Read a manifest (see :func:`manifest_path`) into ``{name: Model}``, in file order.

    Raises:
        ConfigError: the file is missing, not TOML, or has an unknown key or a bad value; the
            message names the file and the key's path (``model[1].file[0].sha256``).
    """
    path = manifest_path(path)
    try:
        data = tomllib.loads(read_user_text(path))
    except OSError as exc:
        raise ConfigError(f"cannot read model manifest {path}: {exc.strerror or exc}",
                          node="models") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}", node="models") from None
    models: dict[str, Model] = {}
    try:
        unknown = sorted(set(data) - {"model", "packaged"})  # packaged: hub.models.packaged
        _check(not unknown, unknown[0] if unknown else "", "unknown key")
        for i, table in enumerate(data.get("model", [])):
            model = _parse_model(table, f"model[{i}]")
            _check(model.name not in models, f"model[{i}].name", f"{model.name!r} repeats")
            models[model.name] = model
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc.message}", node="models") from None
    return models
