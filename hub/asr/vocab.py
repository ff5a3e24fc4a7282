"""The home's closed vocabulary: an FSG grammar, a pronunciation dictionary, a word list.

Built from the sentence templates (:mod:`hub.asr.templates`) filled with the home's entity
names (filtered by the domain each template requires), areas, floors, number ranges and a
small built-in word list for open slots. Generation is cached under
``<cache_dir>/asr/<key>/`` where the key hashes the templates, the home, the item list and the
library versions, so start-up after the first run only reads three small files.

Outputs (files in the cache directory):

- ``grammar.fsg``: PocketSphinx finite-state grammar (Sphinx FSG text format): a prefix tree
  of the sentence patterns with the slot values expanded inline, its states with the same
  futures then merged (:mod:`hub.asr.fsg`). (A JSGF with ~2000 alternatives took PocketSphinx
  minutes and >1 GB to compile; the tree loads in ~50 ms.)
- ``questions.fsg``: the same kind of FSG holding only the sentences without side effects
  (fact questions, state and timer queries: ``side_effects = false`` in the intent catalog),
  which PocketSphinx may accept at a looser rejection threshold (``asr.reject_llr_question``).
- ``words.dict``: CMUdict-format dictionary restricted to the grammar's words.
- ``vocab.json``: the word list for a Vosk grammar (numbers spelled out, plus ``[unk]``),
  the spelled-number map and the generation time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from hub.asr import delays
from hub.asr.base import CONJUNCTION
from hub.asr.coverage import read_only, understood
from hub.asr.fsg import minimized
from hub.asr.fsg_build import COMMAND, FsgBuilder, insert
from hub.asr.lexicon import load_cmudict, number_words_map, pronounce, spell_number
from hub.asr.templates import Pattern, expand_patterns, load_items, template_data
from hub.intents import catalog
from hub.intents.multi import DETERMINERS, MAX_LEAD_WORDS
from hub.paths import DATA_DIR, cache_dir

_LOG = logging.getLogger(__name__)

VOCAB_VERSION = "7"
"""Bump when the generated files change shape, to invalidate old caches."""


CONJOINABLE = frozenset({"HassTurnOn", "HassTurnOff", "HassLightSet"})
"""Commands the grammar lets one utterance join with "and" ("turn on the kitchen light and
turn off the bed light"); the others stand alone. Short ones ("pause", "next") are left out
on purpose: allowed, they let noise before a command be heard as "pause and resume"
(measured on shared/audio/real: "resume" was lost)."""


LOW_PRIOR = frozenset({"_fact", "_slot_answer"})
"""Grammar intents whose own branches get :data:`hub.asr.fsg_build.QUESTION_WEIGHT`: fact
questions, and the bare area and entity names that answer the hub's questions (heard only
where no command's words fit better)."""


@dataclass(frozen=True)
class Vocab:
    """A generated vocabulary on disk (see the module doc for the files)."""

    directory: Path
    key: str
    words: tuple[str, ...]
    """Vosk grammar words (spelled numbers), without ``[unk]``."""
    spelled_numbers: dict
    """``"seventy five"`` -> ``"75"``, to turn Vosk's words into the rules' digits."""
    patterns: int
    """Number of sentence patterns in the grammar."""
    generation_s: float
    """Seconds the generation took when it ran (0 never; read from the cache)."""
    from_cache: bool = False

    @property
    def fsg_path(self) -> Path:
        return self.directory / "grammar.fsg"

    @property
    def questions_path(self) -> Path:
        """FSG of the sentences without side effects (see the module doc)."""
        return self.directory / "questions.fsg"

    @property
    def dict_path(self) -> Path:
        return self.directory / "words.dict"

    def vosk_grammar(self) -> list[str]:
        """The Vosk grammar: every word as a phrase, plus ``"[unk]"`` for the rest."""
        return [*self.words, "[unk]"]


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hub``, else ``~/.cache/hub``."""
    return cache_dir()


def vocab_key(home, data: dict, items: tuple[str, ...]) -> str:
    """sha256 over the templates, the home's names, the items and library versions."""
    versions = [metadata.version(p) for p in ("home-assistant-intents", "hassil", "pocketsphinx")]

    code = [
        (Path(__file__).parent / f).read_text(encoding="utf-8")
        for f in (
            "templates.py",
            "lexicon.py",
            "vocab.py",
            "coverage.py",
            "delays.py",
            "fsg.py",
            "fsg_build.py",
        )
    ]
    code += [p.read_text(encoding="utf-8") for p in sorted((DATA_DIR / "sentences").glob("*.yaml"))]
    code += [
        (Path(__file__).parents[1] / f).read_text(encoding="utf-8")
        for f in (
            "intents/rules.py",
            "intents/match.py",
            "intents/catalog.toml",
            "facts/topics.py",
            "facts/answers.py",
            "intents/followup.py",
            "intents/reference.py",
        )
    ]
    blob = json.dumps(
        {
            "v": VOCAB_VERSION,
            "lib": versions,
            "code": code,
            "data": data,
            "items": items,
            "reminders": load_items(home.language, "reminders"),
            "home": [home.floors, home.areas, home.entities],
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def build_vocab(home, cache_dir: Path | None = None) -> Vocab:
    """The home's vocabulary, from the cache when present, else generated and cached.

    Args:
        home: :class:`hub.settings.HomeSettings`.
        cache_dir: cache root; default :func:`default_cache_dir`.
    """
    data = template_data(home.language)
    items = load_items(home.language)
    key = vocab_key(home, data, items)
    directory = (cache_dir or default_cache_dir()) / "asr" / key[:16]
    cached = _read_cached(directory, key)
    if cached is not None:
        return cached
    started = time.perf_counter()
    files, meta = _generate(home, data, items)
    load_cmudict.cache_clear()  # 126,000 words, about 40 MB: not needed until the next build
    meta["generation_s"] = round(time.perf_counter() - started, 3)
    _write_atomic(directory, {**files, "vocab.json": json.dumps({"key": key, **meta})})
    _LOG.info("asr vocabulary generated in %.2f s: %s", meta["generation_s"], directory)
    return _vocab_from(directory, key, meta, from_cache=False)


def _read_cached(directory: Path, key: str) -> Vocab | None:
    """The cached vocabulary in ``directory`` if complete and for ``key``, else None."""
    try:
        meta = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("key") != key or not (directory / "grammar.fsg").is_file():
        return None
    return _vocab_from(directory, key, meta, from_cache=True)


def _vocab_from(directory: Path, key: str, meta: dict, from_cache: bool) -> Vocab:
    return Vocab(
        directory=directory,
        key=key,
        words=tuple(meta["words"]),
        spelled_numbers=dict(meta["spelled_numbers"]),
        patterns=meta["patterns"],
        generation_s=meta["generation_s"],
        from_cache=from_cache,
    )


def _write_atomic(directory: Path, files: dict[str, str]) -> None:
    """Write ``files`` into a temp dir beside ``directory``, then rename it into place."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=".tmp-"))
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    shutil.rmtree(directory, ignore_errors=True)
    try:
        tmp.rename(directory)
    except OSError:  # another process won the race; its files are equivalent
        shutil.rmtree(tmp, ignore_errors=True)


def _generate(home, data: dict, items: tuple[str, ...]) -> tuple[dict, dict]:
    """Grammar and dictionary texts plus metadata for the home."""
    cmudict = load_cmudict()
    slots = _slot_values(home, items)
    domains = {e["domain"] for e in home.entities}
    usable = set(catalog.usable_in(domains))  # intents the home has a domain for
    patterns = [p for p in expand_patterns(data) if p.intent in usable or p.intent.startswith("_")]
    delayed = delays.probes(patterns)
    kept = understood(patterns + list(delayed), home, slots)
    delayable = {delayed[p] for p in kept if p in delayed}
    rules: dict[str, list[str]] = {}
    body: dict[str, list[str]] = {}
    later: set[str] = set()  # lines that a delay may go with
    for pattern in kept:
        line = None if pattern in delayed else _pattern_line(pattern, slots, rules, cmudict)
        if line is not None:
            body.setdefault(pattern.intent, []).append(line)
            if pattern in delayable:
                later.add(line)
    if later:
        _placeholder_rule(delays.NUMBER, slots, rules, cmudict)
    words = sorted(
        {
            w
            for alts in [*rules.values(), *body.values()]
            for line in alts
            for w in line.split()
            if not w.startswith("<")
        }
        | (set(delays.CONNECTORS + delays.UNITS) if later else set())
    )
    numbers = [w for w in words if w.isdigit()]
    dictionary = "".join(
        f"{w}{f'({i + 1})' if i else ''} {pron}\n"
        for w in words
        for i, pron in enumerate(pronounce(w, cmudict)[:4])
    )
    dictionary += "".join(
        f"{CONJUNCTION}{f'({i + 1})' if i else ''} {pron}\n"
        for i, pron in enumerate(pronounce("and", cmudict)[:4])
    )
    vosk_words = sorted({s for w in words for s in (spell_number(w) if w.isdigit() else w).split()})
    meta = {
        "words": vosk_words,
        "spelled_numbers": number_words_map(numbers),
        "patterns": sum(len(v) for v in body.values()),
    }
    questions = {intent: lines for intent, lines in body.items() if read_only(intent)}
    return {
        "grammar.fsg": _fsg_text(body, rules, later),
        "words.dict": dictionary,
        "questions.fsg": _fsg_text(questions, rules),
    }, meta


def _slot_values(home, items: tuple[str, ...]) -> dict[str, list[tuple[str, str]]]:
    """Placeholder kind -> (value text, domain) pairs of the home (reminder messages: the
    built-in ``data/reminders_<lang>.txt``)."""
    return {
        "reminder": [(text, "") for text in load_items(home.language, "reminders")],
        "name": [  # names and aliases (BC-50: "turn on the big light" is heard too)
            (n.lower(), e["domain"])
            for e in home.entities
            for n in [e["name"], *e.get("aliases", ())]
        ],
        "area": [(n.lower(), "") for a in home.areas for n in [a["name"], *a.get("aliases", ())]],
        "floor": [(f["name"].lower(), "") for f in home.floors],
        "item": [(item, "") for item in items],
    }


def _pattern_line(pattern: Pattern, slots, rules, cmudict) -> str | None:
    """One pattern as words and ``<rule>`` tokens; defines slot rules on the way; None if a
    word cannot be pronounced or a slot has no value in this home."""
    out = []
    for token in pattern.tokens:
        if token.startswith("{"):
            rule = _placeholder_rule(token[1:-1], slots, rules, cmudict)
            if rule is None:
                return None
            out.append(rule)
        elif pronounce(token, cmudict):
            out.append(token)
        else:
            return None
    return " ".join(out)


def _placeholder_rule(spec: str, slots, rules, cmudict) -> str | None:
    """The ``<rule>`` for a placeholder spec (``name:light``, ``range:0:100:1``…) or None."""
    kind, _, arg = spec.partition(":")
    name = "slot_" + spec.replace(":", "_").replace("+", "_")
    if name not in rules:
        if kind == "range":
            start, stop, step = (int(x) for x in arg.split(":"))
            values = [str(n) for n in range(start, stop + 1, step)]
        else:
            wanted = set(arg.split("+")) if arg else None
            values = [
                text for text, domain in slots.get(kind, []) if wanted is None or domain in wanted
            ]
        values = [v for v in values if all(pronounce(w, cmudict) for w in v.split())]
        rules[name] = values
    return f"<{name}>" if rules[name] else None


ELIDABLE = frozenset({"HassTurnOn", "HassTurnOff"})
"""Commands the grammar hears without their action words after "and" (:func:`elided`). Not
HassLightSet: with it, the end of "turn off all of the lights in the office" was heard as
"and the office to 5" (a brightness) in the samples."""

ELIDED_STARTS = frozenset({"on", "off"}) | DETERMINERS
"""The words a command said without its action words may start with after "and" ("on the
<slot_name>", "the lights off"); a bare name, area or number is not heard there (a bare
number let noise after "turn off all of the lights in the office" be heard as "and 5")."""


def elided(line: str) -> list[str]:
    """The forms of a conjoinable pattern ``line`` said after "and" without its action words,
    the rules reading them with the previous command's (:func:`hub.intents.multi.carried`):
    "on the <slot_name>" and "the <slot_name>" of "turn on the <slot_name>", "the lights off"
    of "turn the lights off". Each starts with a word of :data:`ELIDED_STARTS` and has two
    words or more; a line with more than :data:`MAX_LEAD_WORDS` words before its first
    determiner or slot has none."""
    tokens = line.split()
    target = next(
        (i for i, t in enumerate(tokens) if t.startswith("<") or t.lower() in DETERMINERS), 0
    )
    if not 0 < target <= MAX_LEAD_WORDS:
        return []
    return [
        " ".join(tokens[i:])
        for i in range(1, target + 1)
        if tokens[i].lower() in ELIDED_STARTS and len(tokens) - i >= 2
    ]


def _fsg_text(
    body: dict[str, list[str]], rules: dict[str, list[str]], later: set[str] = frozenset()
) -> str:
    """The Sphinx FSG document: a prefix tree of the patterns, slots expanded inline.

    A prefix tree keeps the graph small (shared beginnings such as "turn on the"); every
    outgoing branch of a state gets an equal share of its probability (a branch only fact
    questions take: :data:`hub.asr.fsg_build.QUESTION_WEIGHT`), a slot's share is split among
    its values; each
    pattern's last word also leads into the one final state. After a conjoinable command's
    "and" come the conjoinable commands, also without their action words (:func:`elided`:
    "turn the tv on and the lights off"). The lines in ``later`` (delayable
    commands, :mod:`hub.asr.delays`) may go on into the shared delay tail ("in 10 minutes"),
    and a copy of them follows the shared delay head ("in 10 minutes turn on ...").
    States with the same futures are then merged (:func:`hub.asr.fsg.minimized`).
    """
    trie, commands, delayed = {}, {}, {}
    for intent, alternatives in body.items():
        for line in alternatives:
            insert(trie, line, intent in CONJOINABLE, intent not in LOW_PRIOR, line in later)
            if intent in CONJOINABLE:
                for said in (line, *(elided(line) if intent in ELIDABLE else ())):
                    insert(commands, said, True, True)
            if line in later:
                insert(delayed, line, False, True)
    graph = FsgBuilder(rules)
    graph.add_tree(trie, graph.start)
    if commands:
        again = graph.new_state()
        graph.lines.append(f"TRANSITION {graph.conj} {again} 1 {CONJUNCTION}")
        graph.add_tree(commands, again)
    if delayed:
        graph.add_delay(graph.delay, graph.final, 1.0)
        head = graph.new_state()
        graph.add_delay(graph.start, head, 1.0 / max(1, len(trie.keys() - {COMMAND})))
        graph.add_tree(delayed, head)
    return minimized(graph.text())
