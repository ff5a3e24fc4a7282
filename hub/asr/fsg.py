"""Shrinking a Sphinx FSG without changing its weighted language: merge bisimilar states.

The grammar built by :mod:`hub.asr.vocab` is a prefix tree with the slot values expanded at
every occurrence, so the same futures ("the <name>" then the end) are repeated once per
pattern. Two states with the same future can be one state: the coarsest bisimulation found by
Moore-style partition refinement (Hopcroft & Ullman, *Introduction to Automata Theory*, 1979,
§3.4; for weighted automata: Buchholz, "Bisimulation relations for weighted automata", TCS
393, 2008). States start in two classes (final or not) and are split until every state of a
class has the same outgoing set of (word, class of target) with, for each, the same highest
probability; the classes are the states of the result. The grammar has cycles ("and", the
delay states), hence refinement rather than one bottom-up pass.

The Viterbi score of a word sequence (highest product of probabilities over its paths, what
PocketSphinx's search scores) is the same from any two states of one class, so the merged FSG
gives every sentence the same score as before and accepts no other. Parallel arcs with one
word between the same two merged states keep the highest probability (as PocketSphinx's
``fsg_model_trans_add`` does with duplicates when it loads a grammar).
"""

from __future__ import annotations


def minimized(fsg_text: str) -> str:
    """The Sphinx FSG document ``fsg_text`` with its bisimilar states merged, renumbered densely
    (final 0, start 1, the others in breadth-first order from the start; states the start
    cannot reach are dropped). Same weighted language (see the module doc).

    Args:
        fsg_text: an FSG with one START_STATE, one FINAL_STATE and ``TRANSITION from to prob
            word`` lines (null transitions, without a word, are kept as arcs with word "").
    Returns:
        The document in the same format, probabilities written with 6 significant digits.
    """
    name, count, start, final, arcs = _parse(fsg_text)
    cls = _refine(count, final, arcs)
    best: dict[int, dict[tuple[str, int], float]] = {}
    for src, dst, prob, word in arcs:
        out = best.setdefault(cls[src], {})
        key = (word, cls[dst])
        if prob > out.get(key, -1.0):
            out[key] = prob
    order = {cls[final]: 0, cls[start]: 1}
    todo = [cls[start]]
    while todo:  # breadth-first numbering from the start
        nxt = []
        for c in todo:
            for _word, dst in sorted(best.get(c, {})):
                if dst not in order:
                    order[dst] = len(order)
                    nxt.append(dst)
        todo = nxt
    lines = [
        f"TRANSITION {order[c]} {order[dst]} {prob:.6g} {word}".rstrip()
        for c in sorted(order, key=order.get)
        for (word, dst), prob in sorted(
            best.get(c, {}).items(), key=lambda kv: (order[kv[0][1]], kv[0][0])
        )
    ]
    head = [f"FSG_BEGIN {name}", f"NUM_STATES {len(order)}", "START_STATE 1", "FINAL_STATE 0"]
    return "\n".join([*head, *lines, "FSG_END"]) + "\n"


def _parse(fsg_text: str) -> tuple[str, int, int, int, list[tuple[int, int, float, str]]]:
    """Name, number of states, start, final and (from, to, probability, word) arcs."""
    name, count, start, final, arcs = "fsg", 0, 0, 0, []
    for line in fsg_text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "FSG_BEGIN" and len(parts) > 1:
            name = parts[1]
        elif parts[0] in ("NUM_STATES", "N"):
            count = int(parts[1])
        elif parts[0] in ("START_STATE", "S"):
            start = int(parts[1])
        elif parts[0] in ("FINAL_STATE", "F"):
            final = int(parts[1])
        elif parts[0] in ("TRANSITION", "T"):
            word = parts[4] if len(parts) > 4 else ""
            arcs.append((int(parts[1]), int(parts[2]), float(parts[3]), word))
    return name, count, start, final, arcs


def _refine(count: int, final: int, arcs: list[tuple[int, int, float, str]]) -> list[int]:
    """The class of every state in the coarsest partition that separates the final state from
    the others and is stable: members of a class have equal signatures, a signature being the
    class itself plus the highest probability per (word, class of target)."""
    out: list[list[tuple[str, float, int]]] = [[] for _ in range(count)]
    for src, dst, prob, word in arcs:
        out[src].append((word, prob, dst))
    cls = [1 if s == final else 0 for s in range(count)]
    classes = len(set(cls))
    while True:
        ids: dict[tuple, int] = {}
        new = []
        for s in range(count):
            sig: dict[tuple[str, int], float] = {}
            for word, prob, dst in out[s]:
                key = (word, cls[dst])
                if prob > sig.get(key, -1.0):
                    sig[key] = prob
            new.append(ids.setdefault((cls[s], frozenset(sig.items())), len(ids)))
        if len(ids) == classes:  # each step only splits classes: no new split, stable
            return new
        cls, classes = new, len(ids)
