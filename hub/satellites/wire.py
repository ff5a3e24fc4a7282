"""The writes of one satellite connection, serialized; nothing is written once it is closed."""

from __future__ import annotations

import asyncio


class Wire:
    """The writes of one connection, serialized; after :meth:`close` nothing is written.

    Args:
        client: the connection (anything with ``async write_event(event)``: a
            ``wyoming.client.AsyncTcpClient``).
    """

    def __init__(self, client):
        self.client, self.closed = client, False
        self._lock = asyncio.Lock()

    async def send(self, event) -> None:
        """Write ``event``; a no-op once closed; a failed write closes the wire and raises
        its ``ConnectionError``/``OSError``."""
        if self.closed:
            return
        async with self._lock:
            if self.closed:
                return
            try:
                await self.client.write_event(event)
            except (ConnectionError, OSError):
                self.closed = True
                raise

    def close(self) -> None:
        """Write nothing more (the connection ended, or a newer one replaced it)."""
        self.closed = True
