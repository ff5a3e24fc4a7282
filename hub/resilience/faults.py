"""Fault injection for users and tests: ``--inject NODE=FAULT`` (``[resilience] inject``).

=========  ===================================================================================
FAULT      what the node does
=========  ===================================================================================
hang       blocks until its call is cancelled (timed out), then raises ``TimeoutError_``
slow:MS    waits MS milliseconds first (stops early, raising ``TimeoutError_``, if cancelled)
error      raises ``TransientError``
crash      raises ``RuntimeError``, an unexpected exception that ``classify`` maps to fatal
garbage    returns :data:`GARBAGE`; the node replaces its output with nonsense, which its own
           parser then rejects as ``invalid_output``
=========  ===================================================================================
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from hub.errors import ConfigError, TimeoutError_, TransientError

FAULT_KINDS = ("hang", "slow", "error", "garbage", "crash")
"""The faults ``--inject`` knows."""

GARBAGE = "garbage"
"""What :func:`apply_fault` returns for the ``garbage`` fault."""

MAX_SLOW_MS = 600_000
"""Longest ``slow:MS`` accepted (10 minutes)."""

_USAGE = "expected NODE=FAULT, FAULT one of hang, slow:MS, error, garbage, crash"


@dataclass(frozen=True)
class Fault:
    """A fault to inject into ``node``: ``kind`` in :data:`FAULT_KINDS`, ``ms`` for ``slow``."""

    node: str
    kind: str
    ms: int = 0


def _parse_fault(spec: str, nodes: list[str]) -> Fault:
    """One ``NODE=FAULT`` spec to a :class:`Fault`; ConfigError with a one-line message."""
    node, sep, fault = (part.strip() for part in spec.partition("="))
    if not sep or not node or not fault:
        raise ConfigError(f"--inject {spec!r}: {_USAGE}")
    if node not in nodes:
        raise ConfigError(f"--inject {spec!r}: unknown node {node!r}; nodes: {', '.join(nodes)}")
    kind, colon, arg = fault.partition(":")
    if kind not in FAULT_KINDS:
        raise ConfigError(f"--inject {spec!r}: unknown fault {kind!r}; {_USAGE}")
    if kind != "slow":
        if colon:
            raise ConfigError(f"--inject {spec!r}: fault {kind!r} takes no argument")
        return Fault(node, kind)
    if not arg.isdigit() or not 0 < int(arg) <= MAX_SLOW_MS:
        raise ConfigError(
            f"--inject {spec!r}: slow needs milliseconds, an integer from 1 "
            f"to {MAX_SLOW_MS}, as in slow:500"
        )
    return Fault(node, kind, int(arg))


def parse_faults(specs: Iterable[str], known_nodes: Iterable[str]) -> dict[str, Fault]:
    """Parse ``NODE=FAULT`` specs into ``{node: Fault}``.

    Raises:
        ConfigError: a spec is malformed, names an unknown node or fault, has a bad ``MS``, or
            names a node given before; the message is one line naming the spec.
    """
    nodes = sorted(set(known_nodes))
    faults: dict[str, Fault] = {}
    for spec in specs:
        fault = _parse_fault(spec, nodes)
        if fault.node in faults:
            raise ConfigError(f"--inject {spec!r}: node {fault.node!r} already has a fault")
        faults[fault.node] = fault
    return faults


def apply_fault(fault: Fault | None, cancel: threading.Event) -> str | None:
    """Act out ``fault`` inside a node's work (call it first thing, with the node's ``cancel``).

    Returns:
        :data:`GARBAGE` for the ``garbage`` fault; None when there is no fault or after a
        ``slow`` delay that was not cancelled (the node then does its real work).

    Raises:
        TimeoutError_: ``hang``, or ``slow`` cancelled before its delay ended.
        TransientError: ``error``.
        RuntimeError: ``crash`` (deliberately outside the HubError tree).
    """
    if fault is None:
        return None
    node = fault.node
    if fault.kind == "hang":
        cancel.wait()
        raise TimeoutError_(f"{node}: injected hang, cancelled", node=node)
    if fault.kind == "slow":
        if cancel.wait(fault.ms / 1000):  # wakes as soon as cancel is set
            raise TimeoutError_(f"{node}: injected slow:{fault.ms}, cancelled", node=node)
        return None
    if fault.kind == "error":
        raise TransientError(f"{node}: injected error", node=node)
    if fault.kind == "crash":
        raise RuntimeError(f"{node}: injected crash")
    if fault.kind == "garbage":
        return GARBAGE
    raise ValueError(f"unknown fault kind {fault.kind!r}; expected one of {FAULT_KINDS}")
