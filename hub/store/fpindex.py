"""The in-memory LSH index of the stored fingerprints (one per store, all contexts).

Buckets ``(context, band hash) -> rows`` (kept as numpy arrays once read, so a probe of many
buckets is one ``concatenate`` and ``unique``), the compact vectors (one matrix) and the sha256
of each stored utterance's samples, loaded from the file once and kept current: this
connection's inserts are added as they are made, and a change by any other connection
(``PRAGMA data_version``, which SQLite bumps on another connection's commit: another process,
the maintenance thread's evictions) reloads it. A lookup then needs one query by primary key
for the frames of the few best candidates.
"""

from __future__ import annotations

import threading

import numpy as np


class FingerprintIndex:
    """LSH buckets, vectors and digests of the ``fingerprints`` table (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._clear()

    def _clear(self) -> None:
        self._buckets: dict[tuple[str, int], list[int]] = {}  # rows of the matrix
        self._arrays: dict[tuple[str, int], np.ndarray] = {}  # the same, read-only copies
        self._digests: dict[tuple[str, str], int] = {}
        self._rows: dict[int, int] = {}  # id -> row
        self._ids: list[int] = []  # row -> id
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def _put(self, context: str, fid: int, vector: np.ndarray, digest: str | None) -> None:
        n = len(self._rows)
        if n == len(self._matrix):  # grow by doubling
            grown = np.zeros((max(64, 2 * n), len(vector)), dtype=np.float32)
            if n:
                grown[:n] = self._matrix[:n]
            self._matrix = grown
        self._matrix[n] = vector
        self._rows[fid] = n
        self._ids.append(fid)
        if digest:
            self._digests[(context, digest)] = fid

    def _load(self, db) -> None:
        self._clear()
        for fid, context, vector, digest in db.execute(
            "SELECT id, context, vector, digest FROM fingerprints"
        ):
            self._put(context, fid, np.frombuffer(vector, dtype=np.float32), digest)
        for context, band, fid in db.execute("SELECT context, band_hash, fp_id FROM fp_bands"):
            if fid in self._rows:
                self._buckets.setdefault((context, band), []).append(self._rows[fid])

    def current(self, db) -> None:
        """Reload when another connection changed the file since the last look.

        Raises:
            sqlite3.Error: the file cannot be read.
        """
        version = (id(db.conn), db.execute("PRAGMA data_version").fetchone()[0])
        with self._lock:
            if version != self._version:
                self._load(db)
                self._version = version

    def add(self, context: str, fid: int, vector: np.ndarray, bands, digest: str = "") -> None:
        """Note this connection's own insert (SQLite does not bump its data_version); one
        already loaded from the file is not added twice."""
        with self._lock:
            if fid in self._rows:
                return
            self._put(context, fid, vector, digest)
            for b in bands:
                self._buckets.setdefault((context, b), []).append(self._rows[fid])
                self._arrays.pop((context, b), None)

    def exact(self, context: str, digest: str) -> int | None:
        """The id of the stored utterance with exactly these samples (sha256), or None."""
        with self._lock:
            fid = self._digests.get((context, digest))
            return fid if fid in self._rows else None

    def _bucket(self, key: tuple[str, int]) -> np.ndarray | None:
        found = self._arrays.get(key)
        if found is None and key in self._buckets:
            found = self._arrays[key] = np.asarray(self._buckets[key], dtype=np.int64)
        return found

    def candidates(self, context: str, vectors: np.ndarray, bands, n: int) -> list[int]:
        """Ids of the ``n`` rows sharing a band in ``bands`` whose vector is the most
        cosine-similar to one of ``vectors`` (``(w, d)``, the query's readings), best first."""
        with self._lock:
            found = [a for a in (self._bucket((context, b)) for b in bands) if a is not None]
            if not found:
                return []
            mask = np.zeros(len(self._ids), dtype=bool)
            mask[np.concatenate(found)] = True
            rows = np.flatnonzero(mask)
            sub = self._matrix[rows]
            ids = self._ids
        # one matrix-vector product per reading (a matrix-matrix one would wake BLAS threads)
        scores = np.max([sub @ v for v in vectors], axis=0)
        best = np.argpartition(-scores, n)[:n] if len(rows) > n else np.arange(len(rows))
        return [ids[rows[i]] for i in best[np.argsort(-scores[best])]]
