"""A fake Home Assistant WebSocket API (``websockets`` server in its own thread) speaking the
documented message shapes: auth_required / auth / auth_ok | auth_invalid, get_config,
get_states, the area, floor, device and entity registries, homeassistant/expose_entity/list,
subscribe_events, subscribe_entities and call_service (results and errors).
https://developers.home-assistant.io/docs/api/websocket"""

from __future__ import annotations

import asyncio
import json
import threading

TOKEN = "good-token"


class FakeHa:
    """``data``: ``{command: result}`` for the read-only commands; ``states``: entity_id ->
    state dict. Knobs: ``core_state`` (get_config), ``auth_invalid``, ``silent`` (never sends
    auth_required), ``drop_calls`` (closes the socket when a call_service arrives)."""

    def __init__(self, data: dict, states: dict) -> None:
        self.data, self.states = data, states
        self.core_state = "RUNNING"
        self.auth_invalid = self.silent = self.drop_calls = False
        self.logins = self.subscribed = 0
        self.calls: list[dict] = []
        self.subscriptions: list[dict] = []
        self.connections: list = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(10), "fake HA did not start"
        self.url = f"http://127.0.0.1:{self.port}"

    def _serve(self, ready) -> None:
        from websockets.asyncio.server import serve

        async def main():
            self._stop = asyncio.get_running_loop().create_future()
            async with serve(self._client, "127.0.0.1", 0) as server:
                self.port = server.sockets[0].getsockname()[1]
                ready.set()
                await self._stop

        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(main())

    async def _client(self, ws) -> None:
        if self.silent:
            await asyncio.sleep(60)
            return
        await ws.send(json.dumps({"type": "auth_required", "ha_version": "2024.3.3"}))
        auth = json.loads(await ws.recv())
        self.logins += 1
        if self.auth_invalid or auth.get("access_token") != TOKEN:
            await ws.send(json.dumps({"type": "auth_invalid", "message": "Invalid access"}))
            return
        await ws.send(json.dumps({"type": "auth_ok", "ha_version": "2024.3.3"}))
        self.connections.append(ws)
        try:
            async for text in ws:
                msg = json.loads(text)
                await self._answer(ws, msg)
        finally:  # a closed client gets no more events
            self.subscriptions = [sub for sub in self.subscriptions if sub["ws"] is not ws]

    async def _answer(self, ws, msg: dict) -> None:
        kind, mid = msg.get("type"), msg.get("id")
        if kind == "get_config":
            return await self._result(ws, mid, {"state": self.core_state, "version": "2024.3.3"})
        if kind == "get_states":
            return await self._result(ws, mid, list(self.states.values()))
        if kind in ("subscribe_events", "subscribe_entities"):
            self.subscriptions.append({**msg, "ws": ws})
            self.subscribed += kind == "subscribe_entities"
            await self._result(ws, mid, None)
            if kind == "subscribe_entities":
                ids = msg.get("entity_ids") or list(self.states)
                await ws.send(
                    json.dumps(
                        {
                            "id": mid,
                            "type": "event",
                            "event": {
                                "a": {
                                    e: {
                                        "s": self.states[e]["state"],
                                        "a": self.states[e]["attributes"],
                                    }
                                    for e in ids
                                    if e in self.states
                                }
                            },
                        }
                    )
                )
            return
        if kind == "call_service":
            return await self._call(ws, msg)
        if kind in self.data:
            return await self._result(ws, mid, self.data[kind])
        await ws.send(
            json.dumps(
                {
                    "id": mid,
                    "type": "result",
                    "success": False,
                    "error": {"code": "unknown_command", "message": "Unknown command."},
                }
            )
        )

    async def _result(self, ws, mid, result) -> None:
        await ws.send(json.dumps({"id": mid, "type": "result", "success": True, "result": result}))

    async def _call(self, ws, msg: dict) -> None:
        self.calls.append(msg)
        if self.drop_calls:
            await ws.close()
            return
        entity_id = (msg.get("target") or {}).get("entity_id")
        state = self.states.get(entity_id)
        if state is None:
            await ws.send(
                json.dumps(
                    {
                        "id": msg["id"],
                        "type": "result",
                        "success": False,
                        "error": {"code": "not_found", "message": f"Entity {entity_id} not found"},
                    }
                )
            )
            return
        word = {"turn_on": "on", "turn_off": "off", "lock": "locked", "unlock": "unlocked"}.get(
            msg.get("service"), state["state"]
        )
        await self._result(ws, msg["id"], {"context": {"id": "c1"}})
        await self.change(entity_id, word)

    async def change(self, entity_id: str, word: str) -> None:
        """Set a state and tell the subscribers (subscribe_entities diff)."""
        self.states[entity_id]["state"] = word
        for sub in self.subscriptions:
            if sub["type"] == "subscribe_entities" and entity_id in (
                sub.get("entity_ids") or [entity_id]
            ):
                await sub["ws"].send(
                    json.dumps(
                        {
                            "id": sub["id"],
                            "type": "event",
                            "event": {"c": {entity_id: {"+": {"s": word}}}},
                        }
                    )
                )

    def run(self, coro):
        """Run ``coro`` on the server's loop (from the test's thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def started(self) -> None:
        """HA finished starting: ``homeassistant_started`` to its subscribers."""
        self.core_state = "RUNNING"

        async def tell():
            for sub in self.subscriptions:
                if sub.get("event_type") == "homeassistant_started":
                    await sub["ws"].send(
                        json.dumps(
                            {
                                "id": sub["id"],
                                "type": "event",
                                "event": {"event_type": "homeassistant_started", "data": {}},
                            }
                        )
                    )

        self.run(tell())

    def drop_all(self) -> None:
        """Close every client socket (HA restarting)."""

        async def close():
            for ws in list(self.connections):
                await ws.close()

        self.run(close())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set_result, None)
        self.thread.join(10)
