"""Writing the grammar's FSG (:mod:`hub.asr.vocab`): the prefix tree of the patterns
(:func:`insert`) and its states and weighted arcs (:class:`FsgBuilder`); the shares of
probability each kind of branch gets. :func:`hub.asr.fsg.minimized` then merges its states.
"""

from __future__ import annotations

from hub.asr import delays
from hub.asr.base import CONJUNCTION

CONJUNCTION_SHARE = 0.01
"""Probability, at the end of a command, of going on with "and" and another command."""

QUESTION_WEIGHT = 0.25
"""Weight of a branch that only fact questions (``_fact``) go on to, against 1 for a branch
that a command or a reply goes on to: the many ways of asking the time or the weather must
not take the probability of the commands that begin with the same words ("what", "is",
"how")."""

DELAY = "@"
"""Trie marker: a delay ("in 10 minutes") may follow this pattern's end."""

DELAY_SHARE = 0.01
"""Probability, at the end of a delayable command, of going on with a delay."""

COMMAND = "!"
"""Trie marker: a command or reply pattern goes through this node (see QUESTION_WEIGHT)."""


def insert(
    trie: dict, line: str, conjoinable: bool, command: bool, delayable: bool = False
) -> None:
    """Add one pattern line to a prefix tree; its end is marked ``""`` (and ``"&"`` when
    another command may follow it, :data:`DELAY` when a delay may); with ``command`` every
    node on its way is marked :data:`COMMAND`."""
    node = trie
    for token in line.split():
        node = node.setdefault(token, {})
        if command:
            node[COMMAND] = {}
    node[""] = {}
    if conjoinable:
        node[CONJUNCTION] = {}
    if delayable:
        node[DELAY] = {}


class FsgBuilder:
    """Accumulates FSG states and transitions."""

    def __init__(self, rules: dict[str, list[str]]):
        self.rules = rules
        self.count = 0
        self.final = self.new_state()
        self.start = self.new_state()
        self.conj = self.new_state()
        """State after a command that "and" leads from into another command."""
        self.delay = self.new_state()
        """State after a delayable command that a delay's "in"/"after" leads from."""
        self.lines: list[str] = []

    def new_state(self) -> int:
        self.count += 1
        return self.count - 1

    def add_tree(self, node: dict, state: int) -> None:
        """Add the arcs of trie ``node`` leaving ``state``; a pattern's last word also
        gets an arc straight into the final state (no null transitions)."""
        ends = {"", CONJUNCTION, COMMAND, DELAY}
        weights = {
            token: 1.0 if COMMAND in child else QUESTION_WEIGHT
            for token, child in node.items()
            if token not in ends
        }
        total = sum(weights.values())
        for token, child in node.items():
            if token in ends:
                continue
            share = weights[token] / total
            more = bool(child.keys() - ends)
            stop = (
                1.0
                - (CONJUNCTION_SHARE if CONJUNCTION in child else 0.0)
                - (DELAY_SHARE if DELAY in child else 0.0)
            )
            targets = [(self.final, stop)] if "" in child else []
            if CONJUNCTION in child:
                targets.append((self.conj, CONJUNCTION_SHARE))
            if DELAY in child:
                targets.append((self.delay, DELAY_SHARE))
            if more:
                targets.append((self.new_state(), 1.0))
            for target, weight in targets:
                self.add_token(state, target, token, share * weight)
            if more:
                self.add_tree(child, targets[-1][0])

    def add_delay(self, state: int, target: int, share: float) -> None:
        """Arcs for a delay from ``state`` to ``target``: "in"/"after", a number, a unit."""
        number, unit = self.new_state(), self.new_state()
        for word in delays.CONNECTORS:
            self.add_chain(state, number, [word], share / len(delays.CONNECTORS))
        self.add_token(number, unit, "<slot_" + delays.NUMBER.replace(":", "_") + ">", 1.0)
        for word in delays.UNITS:
            self.add_chain(unit, target, [word], 1.0 / len(delays.UNITS))

    def add_token(self, state: int, target: int, token: str, share: float) -> None:
        """Arcs for one token: a word, or every value of a ``<slot>`` rule."""
        if token.startswith("<"):
            values = self.rules[token[1:-1]]
            for value in values:
                self.add_chain(state, target, value.split(), share / len(values))
        else:
            self.add_chain(state, target, [token], share)

    def add_chain(self, state: int, target: int, words: list[str], prob: float) -> None:
        for i, word in enumerate(words):
            nxt = target if i == len(words) - 1 else self.new_state()
            self.lines.append(f"TRANSITION {state} {nxt} {prob if i == 0 else 1.0:.6g} {word}")
            state = nxt

    def text(self) -> str:
        head = [
            "FSG_BEGIN hub",
            f"NUM_STATES {self.count}",
            "START_STATE 1",
            f"FINAL_STATE {self.final}",
        ]
        return "\n".join([*head, *self.lines, "FSG_END"]) + "\n"
