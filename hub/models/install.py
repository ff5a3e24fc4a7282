"""Install models: download every file to ``.part``, check sha256, then move into place at once.

Layout of the models folder (``$HUB_MODELS_DIR``, else ``$XDG_DATA_HOME/hub/models``)::

    <dir>/<name>/                 one folder per installed model, appears only by rename
    <dir>/<name>/hub-model.json   sidecar: downloads with their sha256, sha256 per file
    <dir>/<file>.part             a download in progress (resumed by the next fetch)
    <dir>/.<name>.*.tmp/          the folder being assembled (unzipped) before the rename

A model is installed when its folder has a sidecar; the folder is assembled next to it and
renamed in one step, so the hub never loads a half-written model.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Iterator, TextIO

from hub.errors import BadInputError, FatalError, TransientError
from hub.models.download import NETWORK_TIMEOUT_S, ChecksumError, NetworkError, download_part
from hub.models.manifest import Model, ModelFile
from hub.paths import data_dir

SIDECAR = "hub-model.json"
"""Name of the file, inside an installed model's folder, that records what was installed."""


def models_dir(explicit: str | os.PathLike | None = None) -> Path:
    """Where models live: ``explicit``, else ``$HUB_MODELS_DIR``, else
    ``$XDG_DATA_HOME/hub/models`` (``~/.local/share/hub/models``)."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("HUB_MODELS_DIR")
    if env:
        return Path(env).expanduser()

    return data_dir("models")


def read_sidecar(model_dir: Path) -> dict | None:
    """The sidecar of an installed model folder; None when missing or unreadable."""
    try:
        meta = json.loads((model_dir / SIDECAR).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and isinstance(meta.get("files"), dict) else None


def installed_path(name: str, directory: str | os.PathLike | None = None) -> Path | None:
    """Path the engines load for installed model ``name``, or None when it is not installed.

    For ``vosk-en-small`` the model folder (for ``vosk.Model``); for a GGUF the ``.gguf`` file;
    for a Piper voice the ``.onnx`` (its ``.onnx.json`` beside it). Only the sidecar is read;
    hashes are checked by :func:`hub.models.verify.verify_installed`.
    """
    folder = models_dir(directory) / name
    meta = read_sidecar(folder)
    if meta is None:
        return None
    entry = str(meta.get("entry") or ".")
    if Path(entry).is_absolute() or ".." in Path(entry).parts:
        return None
    path = folder if entry == "." else folder / entry
    return path if path.exists() else None


@contextlib.contextmanager
def _locked(dest: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on ``<dest>/.<name>.lock`` so two fetches never share a ``.part``.

    Raises:
        TransientError: another fetch of the same model holds the lock.
    """
    lock = dest / f".{name}.lock"
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TransientError(f"another `hub models fetch {name}` is running in {dest}",
                                 node="models") from None
        try:
            yield
        finally:  # removed while still held: no fetch, done or failed, leaves it behind
            lock.unlink(missing_ok=True)


def _fetch_file(file: ModelFile, dest: Path, source, stream, timeout: float) -> tuple[Path, str]:
    """Download one file to ``<dest>/<filename>.part`` and check it: ``(part, sha256)``.

    A resumed ``.part`` that hashes wrong may have been corrupt, so it is fetched once more
    from the start; a fresh one that hashes wrong is removed and reported.

    Raises:
        ChecksumError: the sha256 differs from the manifest's (the ``.part`` is removed).
        NetworkError: see :func:`download_part`.
    """
    part = dest / f"{file.filename}.part"
    for _ in range(2):
        resumed = part.exists() and part.stat().st_size > 0
        try:
            digest = download_part(source, part, file.size, label=file.filename, stream=stream,
                                   timeout=timeout)
        except ChecksumError:
            part.unlink(missing_ok=True)
            raise
        if not file.known_hash or digest == file.sha256:
            return part, digest
        part.unlink()
        if not resumed:
            break
        print(f"{file.filename}: the resumed download does not match its sha256; "
              "downloading it again from the start", file=stream or sys.stderr)
    raise ChecksumError(f"{file.filename}: sha256 {digest} differs from the manifest's "
                        f"{file.sha256}; nothing was installed", node="models")


def _copy_hashed(src, target: Path) -> str:
    """Copy an open binary stream to ``target``; return the sha256 of what was written."""
    hasher = hashlib.sha256()
    with target.open("wb") as out:
        while chunk := src.read(1 << 16):
            out.write(chunk)
            hasher.update(chunk)
    return hasher.hexdigest()


def _zip_root(names: list[str]) -> str | None:
    """The single top folder every member of an archive sits in, or None."""
    tops = {PurePosixPath(n).parts[0] for n in names if PurePosixPath(n).parts}
    nested = all(len(PurePosixPath(n).parts) > 1 or n.endswith("/") for n in names)
    return tops.pop() if len(tops) == 1 and nested else None


def _unzip(archive: Path, into: Path) -> dict[str, str]:
    """Unpack ``archive`` into ``into`` (its single top folder stripped): ``{relpath: sha256}``.

    Raises:
        BadInputError: not a zip archive, or a member path escapes the folder.
    """
    files: dict[str, str] = {}
    try:
        with zipfile.ZipFile(archive) as zf:
            root = _zip_root(zf.namelist())
            for info in zf.infolist():
                rel = PurePosixPath(info.filename)
                if rel.is_absolute() or ".." in rel.parts:
                    raise BadInputError(f"{archive.name}: unsafe member path {info.filename!r}",
                                        node="models")
                rel = PurePosixPath(*rel.parts[1:]) if root else rel
                if info.is_dir() or not rel.parts:
                    (into / rel).mkdir(parents=True, exist_ok=True)
                    continue
                (into / rel).parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src:
                    files[rel.as_posix()] = _copy_hashed(src, into / rel)
    except zipfile.BadZipFile as exc:
        raise BadInputError(f"{archive.name}: not a zip archive ({exc})", node="models") from None
    return files


def _place(model: Model, parts: list[tuple[Path, str]], into: Path) -> dict[str, str]:
    """Put the checked downloads into the assembly folder: ``{relpath: sha256}``."""
    if model.install == "unzip":
        return _unzip(parts[0][0], into)
    files = {}
    for (part, digest), file in zip(parts, model.files):
        try:
            os.link(part, into / file.filename)  # keep the .part until the model is in place
        except OSError:
            shutil.copyfile(part, into / file.filename)
        files[file.filename] = digest
    return files


def _sidecar(model: Model, parts: list[tuple[Path, str]], files: dict[str, str]) -> dict:
    """What the sidecar records for an install."""
    return {
        "name": model.name, "kind": model.kind, "entry": model.entry, "license": model.license,
        "installed_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "verified": all(f.known_hash for f in model.files),
        "downloads": [{"url": f.url, "filename": f.filename, "size": f.size, "sha256": digest}
                      for f, (_, digest) in zip(model.files, parts)],
        "files": files,
    }


def _swap_in(assembled: Path, final: Path) -> None:
    """Rename the assembled folder to ``final``, replacing an older install of it."""
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.rename(final, old)
    os.rename(assembled, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _assemble(model: Model, dest: Path, parts: list[tuple[Path, str]]) -> None:
    """Build ``<dest>/<name>`` from checked downloads in a temp folder, then rename it in."""
    for stale in [*dest.glob(f".{model.name}.*.tmp"), *dest.glob(f".{model.name}.old-*")]:
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{model.name}.", suffix=".tmp", dir=dest))
    try:
        files = _place(model, parts, work)
        if not (work / model.entry).exists():
            raise BadInputError(f"{model.name}: the download has no {model.entry!r}",
                                node="models")
        (work / SIDECAR).write_text(json.dumps(_sidecar(model, parts, files), indent=1) + "\n",
                                    encoding="utf-8")
        _swap_in(work, dest / model.name)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    for part, _ in parts:
        part.unlink(missing_ok=True)


def _check_space(model: Model, dest: Path) -> None:
    """Refuse to start when the folder's disk cannot hold the rest of the download.

    Raises:
        FatalError: not enough free space.
    """
    have = sum((dest / f"{f.filename}.part").stat().st_size for f in model.files
               if (dest / f"{f.filename}.part").exists())
    need, free = model.size - have, shutil.disk_usage(dest).free
    if need > free:
        raise FatalError(f"not enough space in {dest}: {model.name} needs {need / 1e6:.0f} MB "
                         f"more, {free / 1e6:.0f} MB free", node="models")


def _hand_copy_hint(model: Model, dest: Path) -> str:
    """How to install ``model`` without this machine reaching the host."""
    return (f"models can also be copied by hand into {dest}: download "
            f"{', '.join(f.filename for f in model.files)} elsewhere, put them in a folder and "
            f"run `hub models fetch {model.name} --from FOLDER`")


def fetch(model: Model, dest: str | os.PathLike | None = None, *, no_verify: bool = False,
          source_dir: str | os.PathLike | None = None, stream: TextIO | None = None,
          timeout: float = NETWORK_TIMEOUT_S) -> Path:
    """Download, check and install ``model`` into ``<dest>/<name>``; return :func:`installed_path`.

    Args:
        model: the manifest entry.
        dest: models folder; default :func:`models_dir`.
        no_verify: allow files whose sha256 the manifest gives as ``unknown`` (known hashes
            are always checked).
        source_dir: take the files from this folder (copied by hand) instead of their URLs.
        stream: where progress goes; default stderr.
        timeout: seconds for the connection and for each read.

    Raises:
        BadInputError: unknown sha256 without ``no_verify``; a bad archive; a missing file in
            ``source_dir``. ChecksumError (a BadInputError): wrong size or sha256.
        NetworkError: unreachable host (one line with a hint), HTTP error, broken transfer.
        FatalError: not enough disk space. TransientError: the same fetch is running.
    """
    unknown = [f.filename for f in model.files if not f.known_hash]
    if unknown and not no_verify:
        raise BadInputError(f"the manifest has no sha256 for {', '.join(unknown)}; refusing to "
                            f"install {model.name} unverified (--no-verify installs it anyway)",
                            node="models")
    dest = models_dir(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with _locked(dest, model.name):
        _check_space(model, dest)
        parts = []
        for file in model.files:
            source = Path(source_dir) / file.filename if source_dir else file.url
            try:
                parts.append(_fetch_file(file, dest, source, stream, timeout))
            except NetworkError as exc:
                if not exc.message.startswith("cannot reach"):
                    raise
                raise NetworkError(f"{exc.message}; {_hand_copy_hint(model, dest)}",
                                   node="models") from None
        _assemble(model, dest, parts)
    return installed_path(model.name, dest) or dest / model.name


__all__ = ["SIDECAR", "fetch", "installed_path", "models_dir", "read_sidecar"]
