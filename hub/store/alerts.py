"""The ``alerts`` table: the only SQL for alarms and reminders (:mod:`hub.act.alarms`).

A row keeps the alert's next fire as an aware UTC ISO instant (``2026-03-29T06:00:00+00:00``)
plus its IANA zone name and wall time; a naive datetime is refused with
:class:`NaiveDatetimeError` before anything is written (BC-47). A row written without an
offset (by hand, or by an older build) is read as a wall time in its zone, rewritten as UTC,
and logged. Rows are plain dicts: the fields of :class:`hub.act.alarms.Alert`.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from hub.store.rows import RowChange, RowTable

log = logging.getLogger("hub.store.alerts")

_COLUMNS = ("id", "kind", "label", "recurrence", "wall", "zone", "next_fire", "state", "target")
_TIMES = ("next_fire", "due_at", "snoozed_from")


class NaiveDatetimeError(ValueError):
    """An alert's instant was given without a time zone."""


def _instant(value, key: str, row_id: str) -> str | None:
    """``value`` (aware datetime or None) as a UTC ISO string; NaiveDatetimeError if naive."""
    if value is None:
        return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise NaiveDatetimeError(
            f"alert {row_id}: {key} {value!r} has no time zone (store aware UTC instants)"
        )
    return value.astimezone(UTC).isoformat()


def to_row(alert: dict) -> dict:
    """The row of one alert dict; raises NaiveDatetimeError for a naive instant."""
    row_id = str(alert.get("id"))
    record = {**alert, **{k: _instant(alert.get(k), k, row_id) for k in _TIMES}}
    return {**{k: record.get(k) for k in _COLUMNS}, "record": json.dumps(record)}


def _read(text: str | None, zone: str, row_id: str) -> tuple[datetime | None, bool]:
    """(aware UTC instant, True when it was naive and is now migrated)."""
    if not text:
        return None, False
    value = datetime.fromisoformat(text)
    if value.utcoffset() is not None:
        return value.astimezone(UTC), False
    fixed = value.replace(tzinfo=ZoneInfo(zone or "UTC"), fold=0).astimezone(UTC)
    log.warning(
        "alert %s: naive instant %s read as wall time in %s (%s) and rewritten",
        row_id,
        text,
        zone,
        fixed.isoformat(),
    )
    return fixed, True


def from_row(record_text: str) -> tuple[dict, bool]:
    """One alert dict from its stored record; True when a naive instant was migrated."""
    record = json.loads(record_text)
    migrated = False
    for key in _TIMES:
        record[key], fixed = _read(record.get(key), record.get("zone", ""), record.get("id"))
        migrated = migrated or fixed
    return record, migrated


ALERTS = RowTable("alerts", to_row)
"""The ``alerts`` table's rows (one per alert; :func:`to_row`)."""


def stored_alerts(store, alerts: list[dict] | None = None) -> list[dict]:
    """With ``alerts`` (all of this process's alerts now), write what changed since its last
    ones (the first time, since the rows in the file: an alert added, changed, removed;
    :meth:`hub.store.held.HeldMixin.write_rows`), so another process's alerts in the file are
    kept; return the rows stored. Raises NaiveDatetimeError for a naive instant (nothing
    written); a failed SQL write is logged by the store, held until it can be written
    (:mod:`hub.store.held`) and ``alerts`` returned. Migrated naive rows are rewritten."""
    if alerts is not None:
        for alert in alerts:
            to_row(alert)  # a naive instant is refused before anything is written
        if not store.knows_rows("alerts"):
            stored_alerts(store)
        if not store.write_rows(ALERTS, alerts, "the alarms and reminders"):
            return alerts  # held: written when the store can
    got = store._run(
        "alerts read",
        lambda db: db.conn.execute("SELECT record FROM alerts ORDER BY next_fire, id").fetchall(),
        None,
        write=False,
    )
    if got is None:
        store.known_rows("alerts", [])
        return [] if alerts is None else alerts
    read = [from_row(r[0]) for r in got]
    out = [r for r, _ in read]
    if alerts is None:
        store.known_rows("alerts", out)
        migrated = [r for r, m in read if m]
        if migrated:  # those rows rewritten, as changes of them
            store.write_row_change(ALERTS, RowChange(changed=migrated), "the alarms and reminders")
    return out
