"""The Home Assistant device backend: the ``[homeassistant] entities`` are acted on with
``call_service`` and their states followed live, over one supervised WebSocket connection
(:class:`~hub.devices.ha.client.HaClient`) running in its own thread and event loop.

- Exactly once: the outbox row (``backend = "ha"``) is written before the call. A result
  marks it done; an error marks it dropped (never sent again, the state put back). A call
  whose socket closed before its result has an unknown outcome: after the reconnect it is
  settled by the entity's state (done when the state shows it), else sent once more while its
  TTL lasts (BC-41 b).
- Reconnect: 1 s doubling to 30 s, with jitter, forever; a rejected token is one ERROR and
  one new try only when the token file changes or after 10 minutes, and never more than 2
  failed logins an hour (HA bans an address after repeated ones, BC-41 a).
- After each login: ``get_config``; while HA is not ``RUNNING`` the backend says "Home
  Assistant is still starting" and waits for ``homeassistant_started``; then one
  ``subscribe_entities`` for the linked entities only (BC-42), whose first event is the full
  state. While disconnected, linked entities read ``unavailable`` (never a stale value).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import threading
import time

from hub.devices.dialects.ha_json import ha_service_call
from hub.devices.ha.client import AuthError, HaClient, HaError, LinkClosed, read_token
from hub.devices.outbox import DONE, EXPIRED, Outbox

log = logging.getLogger("hub.devices.ha")

AUTH_RETRY_S = 600.0
"""After a rejected token, the next login at most this often (unless the token file changes)."""
STARTED_WAIT_S = 300.0
"""Longest wait for ``homeassistant_started`` before importing states anyway."""
EXPECTED = {
    "turn_on": "on",
    "turn_off": "off",
    "lock": "locked",
    "unlock": "unlocked",
    "open_cover": "open",
    "close_cover": "closed",
}
"""Service -> the state that shows it happened (to settle an unknown outcome)."""
REFUSED_CODES = {
    "not_found": "unsupported",
    "service_validation_error": "unsupported",
    "invalid_format": "unsupported",
    "unauthorized": "unsupported",
    "home_assistant_error": "unreachable",
}
"""HA error code -> the backend's result (nothing more is sent for that command)."""


MAX_FAILED_PER_HOUR = 2
"""Failed logins allowed in any hour (HA's ``ip_ban_enabled`` bans after a few)."""


def may_retry_login(failures: list[float], now: float, token_changed: bool) -> bool:
    """After a rejected token: True when a new login may be tried now: the token file changed
    or :data:`AUTH_RETRY_S` passed since the last failure, and fewer than
    :data:`MAX_FAILED_PER_HOUR` failures (wall-clock seconds in ``failures``) in the last hour."""
    recent = [t for t in failures if now - t < 3600.0]
    if len(recent) >= MAX_FAILED_PER_HOUR:
        return False
    return token_changed or not failures or now - max(failures) >= AUTH_RETRY_S


def backoff_s(attempt: int, rng: random.Random) -> float:
    """Wait before reconnect ``attempt`` (0 first): ``min(30, 2**attempt)`` s, "equal jitter"
    (half of it fixed, half random). Source: Marc Brooker, "Exponential Backoff And Jitter"."""
    d = min(30.0, 2.0 ** min(attempt, 10))
    return d / 2 + rng.uniform(0, d / 2)


class HaBackend:
    """See the module doc.

    Args:
        settings: :class:`hub.settings.HomeAssistantSettings` (``url``, ``entities``, ...).
        token: the access token (:func:`~hub.devices.ha.client.read_token`).
        home: the :class:`hub.home.Home` whose linked entities it acts on.
        store: the hub's store (the outbox), or None.
        notify: ``(event dict) -> None`` for ``action_dropped``.
    """

    def __init__(
        self, settings, token: str, home, *, store=None, notify=None, clock=time.time, rng=None
    ) -> None:
        self.settings, self.token, self.home, self._clock = settings, token, home, clock
        self.links = {
            name: str(link["entity_id"])
            for name, link in settings.entities.items()
            if home is not None and home.entity(name) is not None
        }
        self.names = {eid: name for name, eid in self.links.items()}
        self._reported: dict[str, tuple[str, dict]] = {}  # name -> (state, attributes) HA said
        self.outbox = Outbox(store)
        self.notify = notify or (lambda event: None)
        self.status = "connecting"  # connecting, starting, up, down, auth_failed
        self.connections = 0
        self._rng = rng or random.Random()
        self._client: HaClient | None = None
        self._sent: set[str] = set()  # keys sent on the current connection
        self._closing = threading.Event()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="hub-ha", daemon=True)
        self._thread.start()

    def handles(self, name: str) -> bool:
        """True when ``name`` is a Home Assistant entity."""
        return name in self.links

    # -- the act node's call ------------------------------------------------------------------
    def publish(self, action: dict, cancel=None, wait_s: float | None = None) -> str:
        """Call the service once per key: ``"done"``, ``"ha_queued"`` (HA unreachable or the
        outcome unknown: done when it is back, within the TTL), ``"ha_starting"`` (nothing
        sent), ``"unsupported"`` / ``"unreachable"`` (HA refused it), ``"repeat"``."""
        result = self._publish(action, cancel, wait_s)
        if result not in ("done", "repeat"):  # the actor set the state it expected: put back
            self._restore(action["entity"])  # what HA last said (BC-42: never a made-up "on")
        return result

    def _publish(self, action: dict, cancel=None, wait_s: float | None = None) -> str:
        if self.status == "starting":
            return "ha_starting"
        if self.status == "up" and self._reported.get(action["entity"], ("",))[0] == "unavailable":
            # HA skips unavailable entities and still answers success: nothing would happen
            log.info(
                "Home Assistant: %s is unavailable; %s not sent",
                action["entity"],
                action["service"],
            )
            return "unreachable"
        key = action["idempotency_key"]
        record = {
            "action": action,
            "topic": f"ha:{self.links[action['entity']]}",
            "backend": "ha",
            "expires_at": self._clock() + self.settings.action_ttl_s,
        }
        before = self.outbox.add(key, record)
        if before is not None:
            return "done" if before == DONE else "repeat" if before == EXPIRED else "ha_queued"
        if self.status != "up":
            return "ha_queued"
        future = asyncio.run_coroutine_threadsafe(self._call(key, record), self.loop)
        try:
            return future.result(
                timeout=max(0.05, wait_s if wait_s is not None else self.settings.timeout_s)
            )
        except Exception:
            return "ha_queued"

    async def _call(self, key: str, record: dict) -> str:
        """One ``call_service`` for ``key`` on the current connection (at most once)."""
        client, action = self._client, record["action"]
        if client is None or key in self._sent or self.outbox.status(key) != "pending":
            return "ha_queued"
        self._sent.add(key)
        body = ha_service_call(action, self.links[action["entity"]])
        try:
            await client.request(body.pop("type"), **body)
        except LinkClosed:
            log.warning(
                "Home Assistant closed the connection during %s for %s: outcome "
                "unknown, settled after the reconnect",
                action["service"],
                action["entity"],
            )
            return "ha_queued"
        except HaError as exc:
            result = REFUSED_CODES.get(exc.code, "unreachable")
            log.warning(
                "Home Assistant refused %s for %s: %s", action["service"], action["entity"], exc
            )
            self.outbox.mark(key, EXPIRED)
            return result
        except TimeoutError:
            return "ha_queued"
        self.outbox.mark(key, DONE)
        return "done"

    def todo_items(self, name: str, wait_s: float | None = None) -> list[str] | None:
        """The open items of the linked to-do list ``name`` as Home Assistant holds them
        (``todo.get_items`` with ``status: needs_action``, its service response; oldest
        first), or None when HA cannot say now (not up, no answer within ``wait_s``
        (default ``timeout_s``), refused): the caller then reads its own copy. Source:
        https://www.home-assistant.io/integrations/todo/#action-todoget_items"""
        entity_id, client = self.links.get(name), self._client
        if entity_id is None or client is None or self.status != "up":
            return None

        async def read():
            return await client.request(
                "call_service",
                domain="todo",
                service="get_items",
                service_data={"status": "needs_action"},
                target={"entity_id": entity_id},
                return_response=True,
            )

        future = asyncio.run_coroutine_threadsafe(read(), self.loop)
        try:
            result = future.result(
                timeout=wait_s if wait_s is not None else self.settings.timeout_s
            )
            items = result["response"][entity_id]["items"]
            return [str(i["summary"]) for i in items]
        except Exception as exc:
            future.cancel()
            log.warning("Home Assistant did not give the items of %s: %s", entity_id, exc)
            return None

    # -- the connection -----------------------------------------------------------------------
    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        with contextlib.suppress(asyncio.CancelledError):  # close()
            self.loop.run_until_complete(self._supervise())

    async def _supervise(self) -> None:
        attempt, refused, token_mtime = 0, False, self._token_mtime()
        failures: list[float] = []
        while not self._closing.is_set():
            if refused:
                if not may_retry_login(failures, self._clock(), self._token_mtime() != token_mtime):
                    await asyncio.sleep(1.0)
                    continue
                self._reload_token()
                refused, token_mtime = False, self._token_mtime()
            try:
                client = HaClient(self.settings.url, self.token, self.settings.timeout_s)
                await client.open()
            except AuthError:
                log.error(
                    "Home Assistant rejected the token ([homeassistant] token_file); "
                    "next try when the file changes or in %.0f minutes",
                    AUTH_RETRY_S / 60,
                )
                self.status, refused = "auth_failed", True
                failures.append(self._clock())
                continue
            except LinkClosed as exc:
                self.status = "down"
                delay = backoff_s(attempt, self._rng)
                log.log(
                    logging.WARNING if attempt == 0 else logging.INFO,
                    "Home Assistant at %s unreachable: %s; next try in %.1f s",
                    self.settings.url,
                    exc.message,
                    delay,
                )
                attempt += 1
                await asyncio.sleep(delay)
                continue
            attempt = 0
            await self._session(client)

    async def _session(self, client: HaClient) -> None:
        """One connection: wait for a running HA, follow states, settle, serve until closed."""
        self._client, self._sent = client, set()
        self.connections += 1
        try:
            config = await client.request("get_config") or {}
            if config.get("state", "RUNNING") != "RUNNING":
                await self._wait_started(client, config.get("state"))
            first = asyncio.Event()
            await client.subscribe(
                "subscribe_entities",
                lambda event: self._on_states(event, first),
                entity_ids=sorted(self.names),
            )
            await asyncio.wait_for(first.wait(), self.settings.timeout_s)
            self.status = "up"
            log.info(
                "Home Assistant %s connected: %d entities followed", client.version, len(self.names)
            )
            await self._settle()
            await client.closed.wait()
        except (TimeoutError, HaError) as exc:
            log.warning("Home Assistant connection dropped: %s", exc or type(exc).__name__)
        finally:
            self.status = "down" if not self._closing.is_set() else "closed"
            self._client = None
            await client.close()
            for name in self.links:  # never answer from a state that may be old
                self.home.set_state(name, "unavailable")
                self._reported[name] = ("unavailable", self._reported.get(name, ("", {}))[1])

    async def _wait_started(self, client: HaClient, state) -> None:
        self.status = "starting"
        started = asyncio.Event()
        await client.subscribe(
            "subscribe_events", lambda _e: started.set(), event_type="homeassistant_started"
        )
        log.info("Home Assistant is %s; waiting for it to start", state)
        try:
            await asyncio.wait_for(started.wait(), STARTED_WAIT_S)
        except TimeoutError:
            log.warning("Home Assistant still not started after %.0f s", STARTED_WAIT_S)
        self.status = "connecting"

    def _on_states(self, event, first: asyncio.Event) -> None:
        """A ``subscribe_entities`` event: ``a`` (full states), ``c`` (changes, ``+`` diff)."""
        event = event or {}
        for entity_id, item in (event.get("a") or {}).items():
            self._apply(entity_id, item)
        for entity_id, change in (event.get("c") or {}).items():
            self._apply(entity_id, (change or {}).get("+") or {})
        if "a" in event:
            first.set()

    def _apply(self, entity_id: str, item: dict) -> None:
        name = self.names.get(entity_id)
        if name is None or "s" not in item and "a" not in item:
            return
        attrs = {}
        brightness = (item.get("a") or {}).get("brightness")
        if isinstance(brightness, (int, float)):
            attrs["brightness_pct"] = round(brightness * 100 / 255)
        state = item.get("s") or self.home.state(name) or "unknown"
        self.home.set_state(name, str(state), **attrs)
        self._reported[name] = (str(state), {**self._reported.get(name, ("", {}))[1], **attrs})

    def _restore(self, name: str) -> None:
        """Put back the state Home Assistant last reported for ``name`` (``unavailable`` when
        none, or while the link is down)."""
        state, attrs = self._reported.get(name, ("unavailable", {}))
        if self.home is not None and self.home.entity(name) is not None:
            self.home.set_state(name, state, **attrs)

    async def _settle(self) -> None:
        """Pending rows after a reconnect: done when the state shows it, else sent once more
        while their TTL lasts, else dropped and the user told once."""
        now = self._clock()
        for key, record in self.outbox.pending():
            if record.get("backend") != "ha":
                continue
            action = record["action"]
            if record.get("expires_at", 0) <= now:
                self._drop(key, action)
                continue
            want = EXPECTED.get(action["service"])
            if want is not None and self.home.state(action["entity"]) == want:
                self.outbox.mark(key, DONE)
                continue
            await self._call(key, record)

    def _drop(self, key: str, action: dict) -> None:
        self.outbox.mark(key, EXPIRED)
        text = f"I couldn't reach the {action['entity']}."
        log.warning("Home Assistant: %s (%s %s expired)", text, action["service"], key)
        self.notify(
            {
                "event": "action_dropped",
                "entity": action["entity"],
                "service": action["service"],
                "idempotency_key": key,
                "response": text,
            }
        )

    def _token_mtime(self) -> float:
        try:
            return os.stat(self.settings.token_file).st_mtime if self.settings.token_file else 0.0
        except OSError:
            return 0.0

    def _reload_token(self) -> None:
        try:
            self.token = read_token(self.settings)
        except Exception as exc:
            log.warning("Home Assistant token not re-read: %s", exc)

    def close(self, timeout_s: float = 1.0) -> None:
        """Close the connection and end the thread."""
        self._closing.set()

        async def stop():
            if self._client is not None:
                await self._client.close()
            for task in asyncio.all_tasks(self.loop):
                if task is not asyncio.current_task():
                    task.cancel()

        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(stop(), self.loop)
        self._thread.join(timeout_s + 1.0)
