"""Act: carry out a recognized intent on the in-process home and timers, exactly once.

:class:`Actor` dispatches an :class:`~hub.intents.match.IntentMatch` to its handler, named per
intent in the intent catalog (:mod:`hub.intents.catalog`, ``handler = "module:function"`` in
:mod:`hub.act`), which changes the :class:`~hub.home.Home` state store or the
:class:`~hub.act.timers.Timers` and returns the response text (Home Assistant's English
templates, :mod:`hub.act.responses`) with the actions it took. Each action is
``{"entity", "domain", "service", "data", "idempotency_key"}`` in Home Assistant's service
names (``light.turn_on`` is domain ``light``, service ``turn_on``); the MQTT outbox
publishes these later.

Expected failures (unknown entity, no area, no timer) never raise: they give
``Outcome(ok=False)`` with Home Assistant's error text (``Sorry, I am not aware of any device
called X``) or a clarification question (``Which area do you mean?``), and no action.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections import OrderedDict
from dataclasses import replace

from hub.act.alarms import AlertError
from hub.act.common import Context, Outcome
from hub.act.lost import settle
from hub.act.queries import later
from hub.act.responses import error_text
from hub.act.timers import TimerError, Timers
from hub.home import Home
from hub.intents import catalog
from hub.intents.delay import LATER_SLOT
from hub.intents.match import IntentMatch

__all__ = ["Actor", "Outcome", "HANDLERS", "handler_of"]


def handler_of(reference: str):
    """The handler function for a catalog ``"module:function"`` reference in :mod:`hub.act`.

    Raises:
        ImportError / AttributeError: the catalog names a handler that does not exist.
    """
    module, function = reference.split(":", 1)
    return getattr(importlib.import_module(f"hub.act.{module}"), function)


HANDLERS = {spec.name: handler_of(spec.handler) for spec in catalog.intents()}
"""Intent name -> handler ``(Context, IntentMatch) -> Outcome``, built from the catalog."""

DONE = "Done"
"""Said when an action was carried out but its response template rendered nothing."""

_REMEMBERED = 4096  # idempotency keys kept (oldest forgotten first)


class Actor:
    """Executes intents against the home; side effects happen once per idempotency key.

    Args:
        home: the home whose state store actions change.
        timers: the hub's timers.
        clock: wall-clock seconds since the epoch (time and date answers, scene timestamps).
        tz: time zone for time and date answers; None: the system's local zone.
        alerts: the hub's alarms and reminders (:class:`hub.act.alarms.Alerts`), or None.
        lists: where list items are kept (:class:`hub.act.liststore.ListStore`); the stored
            lists are put on the home now. None: lists live in the home only.
        losses: what a repair of the store lost (:class:`hub.store.losses.Losses`), or None.
    """

    def __init__(
        self,
        home: Home,
        timers: Timers,
        clock=time.time,
        tz=None,
        lists=None,
        alerts=None,
        losses=None,
    ) -> None:
        self._context = Context(
            home=home, timers=timers, clock=clock, tz=tz, lists=lists, alerts=alerts, losses=losses
        )
        if lists is not None:
            lists.restore(home)
        self._lock = threading.Lock()
        self._done: OrderedDict[str, Outcome] = OrderedDict()

    def execute(self, match: IntentMatch, idempotency_key: str) -> Outcome:
        """Carry out ``match`` once; a repeated ``idempotency_key`` returns the first Outcome.

        Returns an :class:`Outcome`; ``ok=False`` (and no actions) for expected failures.
        Each action's ``idempotency_key`` is ``f"{idempotency_key}:{n}"`` (n from 0).
        """
        with self._lock:
            done = self._done.get(idempotency_key)
            if done is not None:
                return done
            outcome = _keyed(self._run(match), idempotency_key)
            self._done[idempotency_key] = outcome
            if len(self._done) > _REMEMBERED:
                self._done.popitem(last=False)
            return outcome

    def _run(self, match: IntentMatch) -> Outcome:
        """Dispatch to the intent's handler, mapping timer errors to their responses."""
        handler = HANDLERS.get(match.intent)
        if LATER_SLOT in match.slots:  # "what time is it in 5 minutes": about later, not now
            handler = later
        if handler is None:
            return Outcome(error_text("not_handled"), ok=False)
        try:
            outcome = handler(self._context, match)
        except (TimerError, AlertError) as exc:
            return Outcome(error_text(exc.key), ok=False)
        settle(self._context, match.intent, outcome)  # something new set: a loss is settled
        if outcome.actions and not outcome.response.strip():  # a template that failed to render
            return replace(outcome, response=DONE)
        return outcome


def _keyed(outcome: Outcome, key: str) -> Outcome:
    """The outcome with each action's ``idempotency_key`` set."""
    actions = tuple({**a, "idempotency_key": f"{key}:{n}"} for n, a in enumerate(outcome.actions))
    return replace(outcome, actions=actions)
