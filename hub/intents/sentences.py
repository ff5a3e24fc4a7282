"""Sentence sources of the rules: Home Assistant's English templates, ours, the user's.

:func:`load_sentences` gives the merged hassil intents dict (hassil ``merge_dict``, in this
order, later ones winning ties):

1. ``home_assistant_intents.get_intents("en")``, filtered to the intents this hub handles (the
   catalog's) and to sentence blocks whose domains the home has;
2. our own sentences in ``hub/data/sentences/*.yaml``;
3. the user's ``[intents] custom_sentences`` files or folders, each block marked with the
   metadata key :data:`CUSTOM` (so a tie goes to them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import yaml
from hassil.util import merge_dict
from home_assistant_intents import get_intent_info, get_intents

from hub.errors import ConfigError
from hub.home import Home
from hub.intents import catalog
from hub.paths import DATA_DIR, read_user_text

SENTENCES_DIR = DATA_DIR / "sentences"

CUSTOM = "hub_custom_sentence"
"""Metadata key marking the user's own sentence blocks."""

# home-assistant-intents' "domain" of an intent -> the home domain it needs.
# (assist_satellite: the hub speaks itself)
_NEEDS = {"homeassistant": None, "shopping_list": "todo", "assist_satellite": None}


def load_sentences(home: Home, custom: Sequence[str]) -> dict:
    """The merged hassil intents dict: HA's (filtered), ours, then the user's.

    Raises:
        ConfigError: a custom sentence file or folder is missing or not valid YAML.
    """
    data = get_intents("en")
    for path in sorted(SENTENCES_DIR.glob("*.yaml")):
        merge_dict(data, _read_yaml(path))
    data = _filter_intents(data, get_intent_info() or {}, home.domains)
    for path in _custom_files(custom):
        user = _read_yaml(path)
        for intent in (user.get("intents") or {}).values():
            for block in intent.get("data", []):
                block["metadata"] = {**(block.get("metadata") or {}), CUSTOM: True}
        merge_dict(data, user)
    return data


def _filter_intents(data: dict, info: dict, domains: frozenset) -> dict:
    """Keep supported intents the home's domains can use, and their usable blocks.

    Blocks that name domains (``slots.domain`` / ``requires_context.domain``) none of which the
    home has are dropped.
    """
    intents = {}
    for name, intent in data["intents"].items():
        needs = _NEEDS.get(
            info.get(name, {}).get("domain", "homeassistant"), info.get(name, {}).get("domain")
        )
        if name not in catalog.names() or (needs and needs not in domains):
            continue
        blocks = [_without_bare(b) for b in intent["data"] if _block_usable(b, domains)]
        blocks = [b for b in blocks if b["sentences"]]
        if blocks:
            intents[name] = {**intent, "data": blocks}
    return {**data, "intents": intents}


_OPTIONAL = re.compile(r"\[[^\[\]]*\]")
_BARE = re.compile(r"(<the>|<in>|\s)*\{(name|area)\}(<the>|<in>|\s)*")
NAMED_ACTIONS = frozenset({"scene", "script"})
"""Domains whose bare name is kept as a command ("movie night" activates the scene)."""


def bare(sentence: str) -> bool:
    """True when a hassil template can match a bare ``{name}`` or ``{area}``: without its
    optional parts it is the slot alone (Home Assistant's ``[<the>] {name}`` HassTurnOn)."""
    text = sentence
    while (shorter := _OPTIONAL.sub("", text)) != text:
        text = shorter
    return _BARE.fullmatch(text.strip()) is not None


def _without_bare(block: dict) -> dict:
    """``block`` without its bare-slot sentences (:func:`bare`), unless it is only for
    :data:`NAMED_ACTIONS`. Case BC-22's kind: a bare name is no command; it is a slot answer
    only while a question waits (:mod:`hub.intents.followup`)."""
    wanted = (block.get("requires_context") or {}).get("domain") or ()
    wanted = {wanted} if isinstance(wanted, str) else set(wanted)
    if wanted and wanted <= NAMED_ACTIONS:
        return block
    return {**block, "sentences": [s for s in block.get("sentences", []) if not bare(s)]}


def _block_usable(block: dict, domains: frozenset) -> bool:
    """True when a sentence block can address something in a home with ``domains``."""
    wanted: set = set()
    for source in (block.get("slots") or {}, block.get("requires_context") or {}):
        value = source.get("domain")
        wanted.update([value] if isinstance(value, str) else value or ())
    return not wanted or bool(wanted & domains)


def _custom_files(paths: Sequence[str]) -> list[Path]:
    """The YAML files named by ``custom_sentences`` (folders are searched recursively)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            files.extend(sorted(path.rglob("*.yaml")))
        elif path.is_file():
            files.append(path)
        elif path.exists():  # a FIFO or device: it could be read forever
            raise ConfigError(f"intents.custom_sentences: not a regular file: {raw}", node="rules")
        else:
            raise ConfigError(
                f"intents.custom_sentences: no such file or folder: {raw}", node="rules"
            )
    return files


def _read_yaml(path: Path) -> dict:
    """One hassil sentence file as a dict.

    Raises:
        ConfigError: unreadable, not YAML, or not a mapping.
    """
    try:
        data = yaml.safe_load(read_user_text(path))
    except OSError as exc:
        raise ConfigError(
            f"intents.custom_sentences: cannot read {path}: {exc.strerror or exc}", node="rules"
        ) from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"intents.custom_sentences: {path}: {exc}", node="rules") from None
    if not isinstance(data, dict):
        raise ConfigError(f"intents.custom_sentences: {path}: expected a mapping", node="rules")
    return data
