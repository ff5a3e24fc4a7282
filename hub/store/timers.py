"""The timers table of the store (a mixin of ``Store``): the only SQL for timers.

Table ``timers(id, record, at)``: one JSON record per timer
(:meth:`hub.act.timers.Timers.records`), replaced as a whole at every change.
"""

from __future__ import annotations

import json
import time

from hub.store.rows import replace_all


class TimersMixin:
    """Timer rows; needs ``_run`` and ``write_state``."""

    def stored_timers(self, records: list[dict] | None = None) -> list[dict]:
        """With ``records``, replace the table's rows by them (one transaction); return the
        rows stored. Never raises: a failed write is logged once (the store's condition), held
        until the store can take it (:mod:`hub.store.held`), and ``records`` is returned."""

        def replace(db):
            return replace_all(
                db,
                "timers",
                "INSERT INTO timers (id, record, at) VALUES (?, ?, ?)",
                [(r["id"], json.dumps(r), time.time()) for r in records],
            )

        if records is not None and not self.write_state("timers", "timers", replace, "the timers"):
            return records  # held: written when the store can
        rows = self._run(
            "timers read",
            lambda db: db.conn.execute("SELECT record FROM timers ORDER BY at, id").fetchall(),
            None,
            write=False,
        )
        if rows is None:
            return [] if records is None else records
        return [json.loads(row[0]) for row in rows]
