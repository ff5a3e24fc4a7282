"""The timers table of the store (a mixin of ``Store``): the only SQL for timers.

Table ``timers(id, record, at)``: one JSON record per timer
(:meth:`hub.act.timers.Timers.records`), ``at`` when the row was added (the order read back).
A change of the process's timers is written as that change (the timers it added, changed and
removed: :meth:`hub.store.held.HeldMixin.write_rows`), so the timers another process set in
the same file are kept.
"""

from __future__ import annotations

import json
import time

from hub.store.rows import RowTable

ENDS_AT_SLACK_S = 1.0
"""Two records of a running timer whose ``ends_at`` differ by less are the same (each
:meth:`hub.act.timers.Timers.records` computes it from the clocks anew)."""


def _same(a: dict, b: dict) -> bool:
    """Whether timer records ``a`` and ``b`` say the same (``ends_at`` within the slack)."""
    ends = a.get("ends_at"), b.get("ends_at")
    if (ends[0] is None) != (ends[1] is None):
        return False
    if ends[0] is not None and abs(float(ends[0]) - float(ends[1])) >= ENDS_AT_SLACK_S:
        return False
    return {**a, "ends_at": None} == {**b, "ends_at": None}


TIMERS = RowTable(
    "timers",
    lambda r: {"id": r["id"], "record": json.dumps(r), "at": time.time()},
    _same,
    kept=("at",),
)
"""The ``timers`` table's rows."""


class TimersMixin:
    """Timer rows; needs ``_run``, ``write_rows``, ``known_rows`` and ``knows_rows``."""

    def stored_timers(self, records: list[dict] | None = None) -> list[dict]:
        """With ``records`` (all of this process's timers now), write what changed since its
        last ones (the first time, since the rows in the file); return the rows stored.
        Never raises: a failed write is logged once (the store's condition), held until the
        store can take it (:mod:`hub.store.held`), and ``records`` is returned."""
        if records is not None:
            if not self.knows_rows("timers"):
                self.stored_timers()
            if not self.write_rows(TIMERS, records, "the timers"):
                return records  # held: written when the store can
        rows = self._run(
            "timers read",
            lambda db: db.conn.execute("SELECT record FROM timers ORDER BY at, id").fetchall(),
            None,
            write=False,
        )
        if rows is None:
            self.known_rows("timers", [])
            return [] if records is None else records
        found = [json.loads(row[0]) for row in rows]
        self.known_rows("timers", found)
        return found
