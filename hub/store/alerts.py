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

from hub.store.rows import replace_all

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


def stored_alerts(store, alerts: list[dict] | None = None) -> list[dict]:
    """With ``alerts``, replace the table's rows by them (one transaction); return the rows
    stored. Raises NaiveDatetimeError for a naive instant (nothing written); a failed SQL
    write is logged by the store, held until it can be written (:mod:`hub.store.held`) and
    ``alerts`` returned. Migrated naive rows are rewritten."""
    rows = [to_row(a) for a in alerts] if alerts is not None else None

    def replace(db):
        return replace_all(
            db,
            "alerts",
            f"INSERT INTO alerts ({', '.join(_COLUMNS)}, record) VALUES "
            f"({', '.join('?' * (len(_COLUMNS) + 1))})",
            [tuple(r[k] for k in (*_COLUMNS, "record")) for r in rows],
        )

    if rows is not None and not store.write_state(
        "alerts", "alerts", replace, "the alarms and reminders"
    ):
        return alerts  # held: written when the store can
    got = store._run(
        "alerts read",
        lambda db: db.conn.execute("SELECT record FROM alerts ORDER BY next_fire, id").fetchall(),
        None,
        write=False,
    )
    if got is None:
        return [] if alerts is None else alerts
    read = [from_row(r[0]) for r in got]
    out = [r for r, _ in read]
    if alerts is None and any(m for _, m in read):
        stored_alerts(store, out)
    return out
