"""The turn's state is plain data, and every key it declares is used (hub/graph/state.py)."""

from __future__ import annotations

import ast
import base64
import dataclasses
import json
import threading
from pathlib import Path
from typing import get_type_hints

import numpy as np

from hub.graph.state import TurnState

from fakes import FakeLlm, make_hub, speech

HUB = Path(__file__).resolve().parents[2] / "hub"
STATE_PY = HUB / "graph" / "state.py"


class _Spy:
    """Wraps a compiled graph; keeps every final state it returns."""

    def __init__(self, graph):
        self.graph, self.finals = graph, []

    def invoke(self, state, config=None, **kwargs):
        final = self.graph.invoke(state, config, **kwargs)
        self.finals.append(final)
        return final


def _plain(value):
    """JSON for the state's dataclasses (frozen, plain data) and audio bytes; nothing else."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"not plain data in the state: {type(value).__name__}")


def _live(value, path="state"):
    """Paths in ``value`` holding live objects (arrays, callables, threads, locks, events)."""
    if (
        isinstance(value, (np.ndarray, threading.Thread, threading.Event))
        or callable(value)
        or type(value).__name__ in ("lock", "RLock")
    ):
        return [path]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _live(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in _live(v, f"{path}[{i}]")]
    return []


def _turns():
    """Final states of turns over most paths: an audio action, text, silence, a sensitive
    action asked back (rules and LLM) and its yes, a streamed LLM answer, a failed recognizer."""
    hubs = [
        make_hub(),
        make_hub(
            text="please let the front door go",
            llm=FakeLlm(
                ('{"intent": "HassTurnOff", "slots": {"name": "Front Door"}, "confidence": 0.9}',)
            ),
        ),
        make_hub(
            text="why is the sky blue",
            llm=FakeLlm(
                ('{"intent": "answer", "confidence": 0.9}',), answer=("It scatters light.",)
            ),
        ),
        make_hub(inject=["asr=error"]),
    ]
    for hub in hubs:
        hub.graph = _Spy(hub.graph)
    first, llm, answer, broken = hubs
    first.turn_audio(speech())
    first.turn_text("what time is it")
    first.turn_audio(speech(0.0))
    first.turn_text("unlock the front door")
    first.turn_text("yes")
    llm.turn_audio(speech())
    answer.turn_audio(speech())
    broken.turn_audio(speech())
    return [final for hub in hubs for final in hub.graph.finals]


def test_state_after_a_turn_is_json_and_holds_no_live_objects():
    finals = _turns()
    keys = set(get_type_hints(TurnState))
    assert len(finals) == 8
    assert any(f.get("outcomes") for f in finals) and any(f.get("pcm") for f in finals)
    assert any(f.get("pending") for f in finals) and any(f.get("confirm") for f in finals)
    assert any(f.get("llm") for f in finals) and any(f.get("errors") for f in finals)
    for final in finals:
        assert set(final) <= keys, set(final) - keys
        assert _live(final) == []
        json.loads(json.dumps(final, default=_plain))  # raises on anything not plain data


def _declared() -> tuple[set[str], set[str]]:
    """(TurnState's keys, the keys of the other shapes state.py declares), from its AST."""
    top, nested = set(get_type_hints(TurnState)), set()
    for node in ast.walk(ast.parse(STATE_PY.read_text())):
        if isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "TypedDict" for b in node.bases
        ):
            names = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)}
            nested |= names - top
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TypedDict":
            nested |= {k.value for k in node.args[1].keys}
    return top, nested


def _used() -> tuple[set[str], set[str]]:
    """(keys read, keys written) anywhere in hub/ but state.py: ``x["k"]``, ``x.get("k")``,
    ``x.pop("k")`` read; ``{"k": ...}`` and ``x["k"] = ...`` write."""
    read, written = set(), set()
    for path in HUB.rglob("*.py"):
        if path == STATE_PY:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                (written if isinstance(node.ctx, ast.Store) else read).add(node.slice.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "pop")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                read.add(node.args[0].value)
            elif isinstance(node, ast.Dict):
                written |= {k.value for k in node.keys if isinstance(k, ast.Constant)}
    return read, written


def test_every_key_state_py_declares_is_used():
    top, nested = _declared()
    read, written = _used()
    assert len(top) >= 30 and "transcript" in top and {"similarity", "message"} <= nested
    assert sorted(top - read) == [], "TurnState keys nothing reads"
    assert sorted(top - written) == [], "TurnState keys nothing writes"
    assert sorted(nested - read - written) == [], "keys of state.py's shapes nothing uses"
