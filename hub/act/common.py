"""Shared pieces of the act handlers: the Outcome message, the handler context, helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from hub.act.alarms import Alerts
from hub.act.liststore import ListStore
from hub.act.responses import entity_view, error_text, render
from hub.act.timers import Timers
from hub.home import Entity, Home, TargetMatch
from hub.intents.followup import ASKS
from hub.intents.match import IntentMatch, resolve_targets


@dataclass(frozen=True)
class Outcome:
    """What an intent did.

    ``response`` is the text to speak; ``actions`` what changed, each
    ``{"entity", "domain", "service", "data", "idempotency_key"}``; ``ok`` False for expected
    failures and clarification questions (then ``actions`` is empty); ``asks`` the slot a
    clarification question asks for (``"area"``, ``"name"``; "" for none), which the next turn
    may answer (:mod:`hub.intents.followup`).
    """

    response: str
    actions: tuple[dict, ...] = ()
    ok: bool = True
    asks: str = ""


@dataclass(frozen=True)
class Context:
    """What handlers work on: the home, the timers, a wall clock, a time zone, where the
    lists are kept (a :class:`hub.act.liststore.ListStore`; None: in the home only), the
    alarms (:class:`hub.act.alarms.Alerts`, or None) and what a repair of the store lost
    (``losses``: :class:`hub.store.losses.Losses`, or None; see :mod:`hub.act.lost`)."""

    home: Home
    timers: Timers
    clock: Callable[[], float]
    tz: tzinfo | None = None
    lists: ListStore | None = None
    alerts: Alerts | None = None
    losses: Any = None

    def now(self) -> datetime:
        """The current local time (``tz``, else the system's zone)."""
        return datetime.fromtimestamp(self.clock(), self.tz)

    def entity(self, name: str) -> Entity:
        """The home's entity ``name`` (one a target match found).

        Raises:
            KeyError: the home has no entity of that name.
        """
        found = self.home.entity(name)
        if found is None:
            raise KeyError(name)
        return found

    def view(self, name: str) -> dict:
        """The template ``state`` view of entity ``name`` (see :func:`entity_view`)."""
        return entity_view(
            self.home.entity(name), self.home.state(name), self.home.attributes(name)
        )


def action(entity: str, domain: str, service: str, **data) -> dict:
    """One action record (its idempotency key is added by the Actor)."""
    return {
        "entity": entity,
        "domain": domain,
        "service": service,
        "data": data,
        "idempotency_key": "",
    }


def failed(targets: TargetMatch) -> Outcome:
    """The failure Outcome for a target match that found nothing."""
    return refuse(targets.error or "no_target", **targets.error_args)


def refuse(key: str, **args) -> Outcome:
    """A failure Outcome with the error text ``key`` and no action; a clarification question
    (``need_area``, ``no_target``) says which slot it asks for."""
    return Outcome(error_text(key, **args), ok=False, asks=ASKS.get(key, ""))


def targets_of(ctx: Context, match: IntentMatch) -> TargetMatch:
    """Resolve the match's targets from its slots (the same rules the recognizer used)."""
    return resolve_targets(ctx.home, match.intent, match.slots, match.response, match.context_slots)


def reply(
    ctx: Context, match: IntentMatch, key: str = "default", name: str | None = None, **extra
) -> str:
    """The intent's response for ``key``, with entity ``name`` (if any) as ``state``."""
    state = ctx.view(name) if name else None
    return render(match.intent, key, match.slots, state=state, **extra)


def each_target(
    ctx: Context,
    match: IntentMatch,
    service: str,
    state: str | None = None,
    attrs: dict | None = None,
    data: dict | None = None,
    key: str = "default",
) -> Outcome:
    """Call ``service`` on every target: set ``state``/``attrs``, answer with ``key``."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    actions = []
    for name in targets.entities:
        entity = ctx.entity(name)
        if state is not None or attrs:
            ctx.home.set_state(name, state or ctx.home.state(name) or "", **(attrs or {}))
        actions.append(action(name, entity.domain, service, **(data or {})))
    return Outcome(reply(ctx, match, key, targets.entities[0]), tuple(actions))
