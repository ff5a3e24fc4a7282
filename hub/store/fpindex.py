"""The in-memory LSH index of the stored fingerprints (one per store, all contexts).

Buckets ``(context, band hash) -> row ids``, the compact vectors (one matrix) and the sha256
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
        self._buckets: dict[tuple[str, int], list[int]] = {}
        self._digests: dict[tuple[str, str], int] = {}
        self._rows: dict[int, int] = {}
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
        if digest:
            self._digests[(context, digest)] = fid

    def _load(self, db) -> None:
        self._clear()
        for fid, context, vector, digest in db.execute(
                "SELECT id, context, vector, digest FROM fingerprints"):
            self._put(context, fid, np.frombuffer(vector, dtype=np.float32), digest)
        for context, band, fid in db.execute("SELECT context, band_hash, fp_id FROM fp_bands"):
            self._buckets.setdefault((context, band), []).append(fid)

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
        """Note this connection's own insert (SQLite does not bump its data_version)."""
        with self._lock:
            self._put(context, fid, vector, digest)
            for b in bands:
                self._buckets.setdefault((context, b), []).append(fid)

    def exact(self, context: str, digest: str) -> int | None:
        """The id of the stored utterance with exactly these samples (sha256), or None."""
        with self._lock:
            fid = self._digests.get((context, digest))
            return fid if fid in self._rows else None

    def candidates(self, context: str, vectors: np.ndarray, bands, n: int) -> list[int]:
        """Ids of the ``n`` rows sharing a band in ``bands`` whose vector is the most
        cosine-similar to one of ``vectors`` (``(w, d)``, the query's warps), best first."""
        with self._lock:
            ids = list({fid for b in bands for fid in self._buckets.get((context, b), ())
                        if fid in self._rows})
            if not ids:
                return []
            rows = self._matrix[[self._rows[i] for i in ids]]
        # one matrix-vector product per warp (a matrix-matrix one would wake BLAS threads)
        scores = np.max([rows @ v for v in vectors], axis=0)
        best = np.argsort(-scores)[:n] if len(ids) > n else np.argsort(-scores)
        return [ids[i] for i in best]
