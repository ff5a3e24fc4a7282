"""The action outbox of the store (a mixin of ``Store``): one row per idempotency key.

Table ``outbox(idempotency_key, action, status, at)``, status ``pending``, ``done`` or
``failed``. When the file cannot be read or written, claims and statuses live in memory (at
most :data:`MEMORY_KEYS`), so device actions still happen exactly once in this process; they
are written to the file when it works again (:meth:`OutboxMixin.flush_outbox`).
"""

from __future__ import annotations

import json
import sqlite3

from hub.store.journal import transaction

MEMORY_KEYS = 4096
"""Outbox keys kept in memory at most while the file is unusable."""


class OutboxMixin:
    """Outbox calls; needs ``_run``, ``clock`` and ``_mem_outbox``."""

    def outbox_claim(self, key: str, action: dict) -> bool:
        """Record a side effect under its idempotency key; False if the key was already used.

        Never raises: when the file fails, the claim is made in memory.
        """
        if key in self._mem_outbox:
            return False
        row = {
            "idempotency_key": key,
            "action": json.dumps(action, default=str),
            "status": "pending",
            "at": self.clock(),
        }

        def claim(db):
            try:
                db.execute(
                    "INSERT INTO outbox (idempotency_key, action, status, at) "
                    "VALUES (:idempotency_key, :action, :status, :at)",
                    row,
                )
                return True
            except sqlite3.IntegrityError:
                return False

        found = self._run("outbox", claim, None)
        if found is None:
            if self.outbox_status(key) is not None:  # a read-only file still says "used"
                return False
            self._remember(row)
            return True
        return found

    def outbox_status(self, key: str) -> str | None:
        """``pending``, ``done`` or ``failed`` for ``key``, None if it was never claimed."""
        if key in self._mem_outbox:
            return self._mem_outbox[key]["status"]
        row = self._run(
            "outbox read",
            lambda db: db.execute(
                "SELECT status FROM outbox WHERE idempotency_key = ?", [key]
            ).fetchone(),
            write=False,
        )
        return row[0] if row else None

    def outbox_pending(self) -> list[tuple[str, str]]:
        """``[(key, action JSON)]`` of the rows still ``pending`` (or an older ``failed``),
        oldest first, the file's and those kept in memory; never raises."""
        rows = (
            self._run(
                "outbox read",
                lambda db: db.execute(
                    "SELECT idempotency_key, action FROM outbox "
                    "WHERE status IN ('pending', 'failed') ORDER BY at"
                ).fetchall(),
                [],
                write=False,
            )
            or []
        )
        mem = [
            (k, r["action"])
            for k, r in self._mem_outbox.items()
            if r["status"] in ("pending", "failed")
        ]
        seen = {k for k, _ in rows}
        return [tuple(r) for r in rows] + [r for r in mem if r[0] not in seen]

    def outbox_done(self, key: str, status: str = "done") -> None:
        """Mark the outbox entry ``key`` ``done`` (or ``failed``); never raises."""
        if key in self._mem_outbox:
            self._mem_outbox[key]["status"] = status
            self.flush_outbox()
            return
        ok = self._run(
            "outbox",
            lambda db: (
                db.execute("UPDATE outbox SET status = ? WHERE idempotency_key = ?", [status, key])
                and True
            ),
            False,
        )
        if not ok:
            self._remember(
                {"idempotency_key": key, "action": "{}", "status": status, "at": self.clock()}
            )

    def _remember(self, row: dict) -> None:
        self._mem_outbox[row["idempotency_key"]] = row
        while len(self._mem_outbox) > MEMORY_KEYS:
            self._mem_outbox.pop(next(iter(self._mem_outbox)))

    def flush_outbox(self) -> None:
        """Write the outbox rows kept in memory to the file, if it can be written now."""
        if not self._mem_outbox:
            return
        with self._lock:
            rows = [dict(r) for r in self._mem_outbox.values()]

        def write(db):
            transaction(
                db,
                "INSERT INTO outbox (idempotency_key, action, status, at) "
                "VALUES (:idempotency_key, :action, :status, :at) "
                "ON CONFLICT(idempotency_key) DO UPDATE SET status = excluded.status",
                rows,
            )
            with self._lock:  # a status changed meanwhile stays in memory for the next flush
                for r in rows:
                    held = self._mem_outbox.get(r["idempotency_key"])
                    if held is not None and held["status"] == r["status"]:
                        self._mem_outbox.pop(r["idempotency_key"], None)
            return True

        self._run("outbox", write, False)
