"""Reading a TOML config file, and fitting its arrays to tuple fields."""

from __future__ import annotations

import tomllib
import typing
from pathlib import Path
from typing import Annotated

from hub.errors import ConfigError
from hub.paths import read_user_text


def as_tuples(cls, table: dict) -> dict:
    """TOML arrays given for tuple fields, as tuples (strict mode takes no list for a tuple)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out = {}
    for key, value in table.items():
        hint = hints.get(key)
        origin = typing.get_origin(
            typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint
        )
        out[key] = tuple(value) if origin is tuple and isinstance(value, list) else value
    return out


def read_toml(path: Path) -> dict:
    """The parsed TOML file at ``path`` (a leading UTF-8 byte-order mark is dropped);
    ConfigError (naming the file) when unreadable: also a device or FIFO (``--config
    /dev/zero``) or a file over :data:`hub.paths.MAX_TEXT_BYTES`, refused before it is read."""
    try:
        text = read_user_text(path)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
