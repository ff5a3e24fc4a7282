"""What belongs to one room or client: its area, its pending question, what it last acted on,
its player, its clock.

Several rooms (satellites) or Wyoming clients share one process and one set of engines; each
has its own :class:`Conversation`, so a "yes" in one never confirms a question asked in
another (Home Assistant keeps the same state per ``conversation_id``).

A conversation holds at most one question at a time: a confirmation ("Do you want me to unlock
the Front Door?") or a slot question ("Which area do you mean?", "Which one?",
:class:`hub.intents.followup.SlotQuestion`); asking one forgets the other, and only the very
next turn may answer it, within ``confirm_window_s``. It also remembers the entities it last
acted on, so "turn it off" refers to them for :data:`REFERENCE_WINDOW_S`
(:mod:`hub.intents.reference`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CONFIRM_WINDOW_S = 20.0
"""How long a question "Do you want me to ...?" waits for its yes (the next turn)."""

MAX_CONVERSATIONS = 256
"""Conversations kept at once; the least recently used one is forgotten past this."""

REFERENCE_WINDOW_S = 300.0
"""How long "it" / "them" refer to what the conversation last acted on (seconds)."""

DEFAULT_ID = "default"
"""The conversation of ``hub replay``, ``hub ask`` and a single-room ``hub run``."""


@dataclass
class Conversation:
    """One room's or one client's conversation.

    Args:
        conversation_id: the id Home Assistant / a Wyoming client uses for it.
        area: the area the satellite is in ("turn on the lights" means this area's); None
            for none.
        clock: monotonic seconds; tests pass a fake and advance it instead of sleeping.
        confirm_window_s: how long a confirmation question waits for its answer.
        player: where this conversation's speech is played (anything with
            ``enqueue(AudioChunk)``), or None when the answer is only written or returned.
    """

    conversation_id: str = DEFAULT_ID
    area: str | None = None
    clock: Callable[[], float] = time.monotonic
    confirm_window_s: float = CONFIRM_WINDOW_S
    player: Any = None
    reference_window_s: float = REFERENCE_WINDOW_S
    _pending: tuple[float, Any] | None = field(default=None, repr=False)
    _slot: tuple[float, Any] | None = field(default=None, repr=False)
    _acted: tuple[float, tuple[str, ...]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def ask_confirmation(self, match: Any) -> None:
        """Remember ``match`` (an action waiting for a spoken yes in the next turn); a slot
        question asked before is forgotten."""
        with self._lock:
            self._pending, self._slot = (self.clock(), match), None

    def ask_slot(self, question: Any) -> None:
        """Remember ``question`` (a :class:`hub.intents.followup.SlotQuestion`: an intent
        waiting for one slot, answered by the next turn); a pending confirmation is forgotten."""
        with self._lock:
            self._slot, self._pending = (self.clock(), question), None

    def take_slot(self) -> Any:
        """The slot question asked less than ``confirm_window_s`` ago, else None; taking it
        clears it (the next turn answers it or is a new request)."""
        with self._lock:
            asked, self._slot = self._slot, None
        if asked is None or self.clock() - asked[0] > self.confirm_window_s:
            return None
        return asked[1]

    def acted_on(self, entities) -> None:
        """Remember ``entities`` (names) as what this conversation last acted on (what "it"
        and "them" mean); an empty sequence changes nothing."""
        names = tuple(entities)
        if names:
            with self._lock:
                self._acted = (self.clock(), names)

    def last_acted(self) -> tuple[str, ...]:
        """The entities last acted on, if less than ``reference_window_s`` ago, else ()."""
        with self._lock:
            acted = self._acted
        if acted is None or self.clock() - acted[0] > self.reference_window_s:
            return ()
        return acted[1]

    def take_confirmation(self) -> Any:
        """The action waiting for a yes, if asked less than ``confirm_window_s`` ago, else None.

        Taking it clears it: the question is answered by the very next turn or not at all.
        """
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None or self.clock() - pending[0] > self.confirm_window_s:
            return None
        return pending[1]

    @property
    def awaiting_confirmation(self) -> bool:
        """True while a question is waiting for its yes (follow-up listening uses it)."""
        with self._lock:
            pending = self._pending
        return pending is not None and self.clock() - pending[0] <= self.confirm_window_s

    @property
    def awaiting_answer(self) -> bool:
        """True while any question (a confirmation or a slot question) waits for the next
        turn (the daemon's follow-up listening uses it)."""
        with self._lock:
            asked = self._slot
        fresh = asked is not None and self.clock() - asked[0] <= self.confirm_window_s
        return fresh or self.awaiting_confirmation

    def play(self, chunk: Any) -> None:
        """Hand a synthesized sentence to this conversation's player, when it has one."""
        if self.player is not None:
            self.player.enqueue(chunk)


class Conversations:
    """The conversations of one hub, keyed by conversation id; thread-safe.

    Args:
        clock: given to every conversation made here.
        default_area: the area of conversations that do not name one (``[home]``
            ``satellite_area``).
        confirm_window_s: given to every conversation made here.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        default_area: str | None = None,
        confirm_window_s: float = CONFIRM_WINDOW_S,
    ) -> None:
        self._clock, self._area, self._window = clock, default_area, confirm_window_s
        self._by_id: OrderedDict[str, Conversation] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conversation_id: str | None = None, *, area: str | None = None) -> Conversation:
        """The conversation ``conversation_id`` (made on first use; a new id when None).

        ``area`` sets the conversation's area when given.
        """
        cid = conversation_id or uuid.uuid4().hex
        with self._lock:
            conv = self._by_id.get(cid)
            if conv is None:
                conv = Conversation(cid, area or self._area, self._clock, self._window)
                self._by_id[cid] = conv
                while len(self._by_id) > MAX_CONVERSATIONS:
                    self._by_id.popitem(last=False)
            elif area is not None:
                conv.area = area
            self._by_id.move_to_end(cid)
            return conv

    def drop(self, conversation_id: str) -> None:
        """Forget ``conversation_id`` (its pending confirmation and follow-up state); a
        conversation that does not exist is no error."""
        with self._lock:
            self._by_id.pop(conversation_id, None)

    def __contains__(self, conversation_id: object) -> bool:
        with self._lock:
            return conversation_id in self._by_id

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)
