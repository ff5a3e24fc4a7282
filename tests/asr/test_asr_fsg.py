"""The merged grammar (hub.asr.fsg) scores every word sequence as the prefix-tree grammar does.

The home's grammar is generated once without the merge; each sentence (every pattern filled
with the home's values, random paths through the tree grammar including "and" and delays) and
each non-sentence (those with a word dropped, swapped or added) gets the same Viterbi score
from both FSGs, or is rejected by both.
"""

from __future__ import annotations

import math
import random

import pytest

from hub.asr import vocab as vocab_module
from hub.asr.coverage import _probes
from hub.asr.fsg import minimized
from hub.asr.templates import expand_patterns, template_data
from hub.asr.vocab import _slot_values, load_items
from hub.intents import catalog
from hub.settings import load_settings

from shared_data import home_toml


@pytest.fixture(scope="module")
def home():
    return load_settings(str(home_toml())).home


@pytest.fixture(scope="module")
def tree_grammars(home):
    """grammar.fsg and questions.fsg as generated without the merge."""
    items = load_items()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vocab_module, "minimized", lambda text: text)
        files, _meta = vocab_module._generate(home, template_data(), items)
    return files["grammar.fsg"], files["questions.fsg"]


class Fsg:
    """A weighted FSG acceptor: the Viterbi (highest) log-probability of a word sequence."""

    def __init__(self, text: str):
        self.arcs: dict[str, dict[str, list[tuple[str, float]]]] = {}
        self.states = 0
        for line in text.splitlines():
            parts = line.split()
            if parts[:1] == ["START_STATE"]:
                self.start = parts[1]
            elif parts[:1] == ["FINAL_STATE"]:
                self.final = parts[1]
            elif parts[:1] == ["NUM_STATES"]:
                self.states = int(parts[1])
            elif parts[:1] == ["TRANSITION"]:
                assert len(parts) == 5, line  # the builder makes no null transitions
                self.arcs.setdefault(parts[1], {}).setdefault(parts[4], []).append(
                    (parts[2], math.log(float(parts[3])))
                )
        self.transitions = sum(len(v) for w in self.arcs.values() for v in w.values())

    def score(self, words: list[str]) -> float | None:
        """Highest log-probability of a path from start to final reading ``words``; None if
        there is no such path."""
        best = {self.start: 0.0}
        for word in words:
            nxt: dict[str, float] = {}
            for state, score in best.items():
                for dst, logp in self.arcs.get(state, {}).get(word, ()):
                    if score + logp > nxt.get(dst, -math.inf):
                        nxt[dst] = score + logp
            best = nxt
        return best.get(self.final)

    def walk(self, rng: random.Random, longest: int = 40) -> list[str]:
        """A random path's words from start to final (choices uniform over the arcs)."""
        while True:
            state, words = self.start, []
            while state != self.final and len(words) < longest:
                choices = [(w, d) for w, ds in self.arcs.get(state, {}).items() for d, _ in ds]
                if not choices:
                    break
                word, state = rng.choice(choices)
                words.append(word)
            if state == self.final:
                return words


def assert_same(tree: Fsg, merged: Fsg, sentences) -> tuple[int, int]:
    """Both FSGs give each sentence the same score (or both reject it); (accepted, rejected)."""
    accepted = rejected = 0
    for words in sentences:
        want, got = tree.score(words), merged.score(words)
        if want is None:
            assert got is None, words
            rejected += 1
        else:
            assert got == pytest.approx(want, abs=1e-9), words
            accepted += 1
    return accepted, rejected


def mutations(sentences, words: list[str], rng: random.Random):
    """Each sentence with one word dropped, two neighbours swapped, one word added."""
    for s in sentences:
        i = rng.randrange(len(s))
        yield s[:i] + s[i + 1 :]
        if len(s) > 1 and s[i - 1] != s[i]:
            yield s[: i - 1] + [s[i], s[i - 1]] + s[i + 1 :]
        yield s[:i] + [rng.choice(words)] + s[i:]


def test_merged_grammar_is_smaller_and_scores_every_pattern_sentence_the_same(home, tree_grammars):
    tree, merged = Fsg(tree_grammars[0]), Fsg(minimized(tree_grammars[0]))
    assert merged.states < tree.states / 4 and merged.transitions < tree.transitions / 4
    slots = _slot_values(home, load_items())
    usable = set(catalog.usable_in({e["domain"] for e in home.entities}))
    sentences = [
        t.lower().split()
        for p in expand_patterns(template_data())
        if p.intent in usable or p.intent.startswith("_")
        for t in _probes(p, slots)
    ]
    accepted, rejected = assert_same(tree, merged, sentences)
    assert accepted > 1000 and rejected > 0  # patterns the generation dropped stay out


@pytest.mark.parametrize("which", [0, 1], ids=["grammar", "questions"])
def test_merged_grammar_scores_random_paths_and_their_mutations_the_same(tree_grammars, which):
    tree, merged = Fsg(tree_grammars[which]), Fsg(minimized(tree_grammars[which]))
    rng = random.Random(11)
    paths = [tree.walk(rng) for _ in range(3000)]
    if which == 0:
        assert any("and" in p for p in paths) and any("minutes" in p for p in paths)
    words = sorted({w for p in paths for w in p})
    assert assert_same(tree, merged, paths)[0] == len(paths)
    accepted, rejected = assert_same(tree, merged, list(mutations(paths, words, rng)))
    assert rejected > 1000
    walked = [merged.walk(rng) for _ in range(1000)]  # and nothing the tree grammar lacks
    assert assert_same(tree, merged, walked)[0] == len(walked)


def test_merging_keeps_the_highest_of_parallel_arcs_and_separates_different_futures():
    text = (
        "\n".join(
            [
                "FSG_BEGIN t",
                "NUM_STATES 6",
                "START_STATE 1",
                "FINAL_STATE 0",
                "TRANSITION 1 2 0.5 turn",
                "TRANSITION 1 3 0.5 turn",
                "TRANSITION 2 0 0.4 on",
                "TRANSITION 3 0 0.4 on",
                "TRANSITION 1 4 0.2 switch",
                "TRANSITION 4 0 0.4 off",
                "TRANSITION 1 5 0.1 go",
                "FSG_END",
            ]
        )
        + "\n"
    )
    merged = Fsg(minimized(text))
    assert merged.states == 5  # final, start, after "turn" (2 and 3 merged), "switch", "go"
    assert merged.score(["turn", "on"]) == pytest.approx(math.log(0.5 * 0.4))
    assert merged.score(["switch", "off"]) == pytest.approx(math.log(0.2 * 0.4))
    assert merged.score(["turn", "off"]) is None and merged.score(["go"]) is None
