"""Tables of records keyed by ``id`` (the ``timers`` and ``alerts`` tables), written change by
change: what one process added, changed and removed is applied to the rows in the file, so
the rows another process wrote meanwhile are kept (never a whole-table replacement).

A process's change is :func:`diff` of its records before and after (what the user asked: a
timer set, paused, cancelled); :func:`apply` writes it inside the write transaction, to the
rows read there. A new record whose ``id`` another process already used in the file gets the
next free id of its kind in the file (``timer-1`` taken: ``timer-3``), remembered in
``alias`` so the process's later changes of it go to that row; a changed record whose row
another process removed (a timer it cancelled) stays removed.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RowTable:
    """How the records of one table become its rows.

    Args:
        name: the table (``id TEXT PRIMARY KEY`` and the columns of ``row``).
        row: a record (its ``id`` the row's key) -> ``{column: value}``, ``id`` included.
        same: whether two records of one id are the same (else the row is updated).
        kept: columns an update leaves as they are (``at``: the order rows were added in).
    """

    name: str
    row: Callable[[dict], dict]
    same: Callable[[dict, dict], bool] = operator.eq
    kept: tuple[str, ...] = ()


@dataclass
class RowChange:
    """What one process did to a table's records: ``added`` and ``changed`` records,
    ``removed`` ids (the process's own ids)."""

    added: list[dict] = field(default_factory=list)
    changed: list[dict] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def diff(before: dict[str, dict], after: list[dict], same=operator.eq) -> RowChange:
    """The change from records ``before`` (by id) to the list ``after``."""
    now = {str(r["id"]): r for r in after}
    change = RowChange(removed=[k for k in before if k not in now])
    for key, record in now.items():
        if key not in before:
            change.added.append(record)
        elif not same(before[key], record):
            change.changed.append(record)
    return change


def apply(conn, table: RowTable, change: RowChange, alias: dict[str, str]) -> int:
    """Write ``change`` to ``table`` through ``conn`` (inside the caller's transaction), over
    the rows there now; ``alias`` maps the process's ids to the file's where they differ (it
    is updated). Returns the rows written.

    Raises:
        sqlite3.Error: the write failed (the caller rolls back).
    """
    name, done = table.name, 0
    for local in change.removed:
        done += conn.execute(f"DELETE FROM {name} WHERE id = ?", [alias.pop(local, local)]).rowcount
    for record in change.changed:
        key = alias.get(str(record["id"]), str(record["id"]))
        row = table.row({**record, "id": key})
        cols = [c for c in row if c != "id" and c not in table.kept]
        sets = ", ".join(f"{c} = ?" for c in cols)
        values = [row[c] for c in cols]
        done += conn.execute(f"UPDATE {name} SET {sets} WHERE id = ?", [*values, key]).rowcount
    for record in change.added:
        key = _free_id(conn, name, str(record["id"]))
        if key != str(record["id"]):
            alias[str(record["id"])] = key
        row = table.row({**record, "id": key})
        marks = ", ".join("?" * len(row))
        conn.execute(f"INSERT INTO {name} ({', '.join(row)}) VALUES ({marks})", list(row.values()))
        done += 1
    return done


def _free_id(conn, table: str, wanted: str) -> str:
    """``wanted`` when no row of ``table`` has it, else the next free id of its kind
    (``<kind>-<n>``, n past every n of that kind in the table)."""
    if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", [wanted]).fetchone() is None:
        return wanted
    kind = wanted.rsplit("-", 1)[0] if "-" in wanted else wanted
    taken = {r[0] for r in conn.execute(f"SELECT id FROM {table}")}
    tails = [k.rsplit("-", 1)[-1] for k in taken if k.startswith(f"{kind}-")]
    n = max((int(t) for t in tails if t.isdigit()), default=0) + 1
    while f"{kind}-{n}" in taken:
        n += 1
    return f"{kind}-{n}"
