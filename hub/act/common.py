"""Shared pieces of the act handlers: the Outcome message, the handler context, helpers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.home import Home, TargetMatch
from hub.intents.rules import IntentMatch, resolve_targets
from hub.act.responses import entity_view, error_text, render
from hub.act.timers import Timers


@dataclass(frozen=True)
class Outcome:
    """What an intent did.

    ``response`` is the text to speak; ``actions`` what changed, each
    ``{"entity", "domain", "service", "data", "idempotency_key"}``; ``ok`` False for expected
    failures and clarification questions (then ``actions`` is empty).
    """

    response: str
    actions: tuple[dict, ...] = ()
    ok: bool = True


@dataclass(frozen=True)
class Context:
    """What handlers work on: the home, the timers, a wall clock and a time zone."""

    home: Home
    timers: Timers
    clock: object
    tz: object = None

    def now(self) -> datetime:
        """The current local time (``tz``, else the system's zone)."""
        return datetime.fromtimestamp(self.clock(), self.tz)

    def view(self, name: str) -> dict:
        """The template ``state`` view of entity ``name`` (see :func:`entity_view`)."""
        return entity_view(self.home.entity(name), self.home.state(name),
                           self.home.attributes(name))


def action(entity: str, domain: str, service: str, **data) -> dict:
    """One action record (its idempotency key is added by the Actor)."""
    return {"entity": entity, "domain": domain, "service": service, "data": data,
            "idempotency_key": ""}


def failed(targets: TargetMatch) -> Outcome:
    """The failure Outcome for a target match that found nothing."""
    return Outcome(error_text(targets.error or "no_target", **targets.error_args), ok=False)


def refuse(key: str, **args) -> Outcome:
    """A failure Outcome with the error text ``key`` and no action."""
    return Outcome(error_text(key, **args), ok=False)


def targets_of(ctx: Context, match: IntentMatch) -> TargetMatch:
    """Resolve the match's targets from its slots (the same rules the recognizer used)."""
    return resolve_targets(ctx.home, match.intent, match.slots, match.response,
                           match.context_slots)


def reply(ctx: Context, match: IntentMatch, key: str = "default", name: str | None = None,
          **extra) -> str:
    """The intent's response for ``key``, with entity ``name`` (if any) as ``state``."""
    state = ctx.view(name) if name else None
    return render(match.intent, key, match.slots, state=state, **extra)


def each_target(ctx: Context, match: IntentMatch, service: str, state: str | None = None,
                attrs: dict | None = None, data: dict | None = None,
                key: str = "default") -> Outcome:
    """Call ``service`` on every target: set ``state``/``attrs``, answer with ``key``."""
    targets = targets_of(ctx, match)
    if not targets.ok:
        return failed(targets)
    actions = []
    for name in targets.entities:
        entity = ctx.home.entity(name)
        if state is not None or attrs:
            ctx.home.set_state(name, state or ctx.home.state(name), **(attrs or {}))
        actions.append(action(name, entity.domain, service, **(data or {})))
    return Outcome(reply(ctx, match, key, targets.entities[0]), tuple(actions))
