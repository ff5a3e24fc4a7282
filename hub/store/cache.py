"""The store's caches (a mixin of ``Store``): fingerprint -> transcript, response -> audio.

Both are least-recently-used: a read notes the row's use in memory and
:func:`hub.store.retention.prune` writes those times and evicts the oldest rows while the
caches hold more than ``[store] cache_mb`` (canned answers are never evicted). A cache read or
write that fails is a miss or a skip, never an error.
"""

from __future__ import annotations

import json


from hub.store import fingerprint as fpm

CANDIDATES = 2
"""LSH candidates (the most cosine-similar compact vectors) confirmed with DTW per lookup."""


class CacheMixin:
    """Cache calls; needs ``_run``, ``clock`` and ``_touched``."""

    # -- fingerprint -> transcript (L1) ------------------------------------------------------
    def put_fingerprint(self, context: str, fp: fpm.Fingerprint, transcript: str,
                        alternatives: tuple[str, ...] = ()) -> bool:
        """Remember the transcript of an utterance under ``context`` (see
        :func:`hub.store.fingerprint.context_key`); False if the write was skipped."""
        frames, vector = fpm.pack(fp)
        now = self.clock()

        def write(db):
            conn = db.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute(
                    "INSERT INTO fingerprints (context, frames, vector, transcript, alternatives,"
                    " at, used_at, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [context, frames, vector, transcript, json.dumps(list(alternatives)), now,
                     now, len(frames) + len(vector) + len(transcript)])
                conn.executemany("INSERT OR IGNORE INTO fp_bands VALUES (?, ?, ?)",
                                 [(context, b, cur.lastrowid) for b in fp.bands])
                conn.execute("COMMIT")
                self._fp_index.current(db)
                self._fp_index.add(context, cur.lastrowid, fp.vector, fp.bands)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return True

        return bool(self._run("transcript cache", write, False))

    def find_fingerprint(self, context: str, fp: fpm.Fingerprint, min_similarity: float
                         ) -> tuple[str, tuple[str, ...], float] | None:
        """``(transcript, alternatives, similarity)`` of the most similar stored utterance
        under ``context`` with a similarity of at least ``min_similarity``, or None.

        LSH candidates (one band in common, :class:`hub.store.fpindex.FingerprintIndex`), the
        best :data:`CANDIDATES` by vector cosine, then
        :func:`hub.store.fingerprint.similarity` (DTW) on each in that order until one passes.
        """
        if self.degraded == "damaged":
            return None

        def read(db):
            self._fp_index.current(db)
            top = self._fp_index.candidates(context, fp.vector, fp.bands, CANDIDATES)
            if not top:
                return []
            found = db.execute("SELECT id, frames, vector, transcript, alternatives FROM "
                              f"fingerprints WHERE id IN ({', '.join('?' for _ in top)})",
                              top).fetchall()
            by_id = {r[0]: r for r in found}
            return [by_id[i] for i in top if i in by_id]

        best, best_sim = None, -1.0
        for row in self._run("transcript cache", read, [], write=False) or []:
            sim = fpm.similarity(fp, fpm.unpack(row[1], row[2]))
            if sim > best_sim:
                best, best_sim = row, sim
            if sim >= min_similarity:
                break  # the most cosine-similar candidate that passes: no second DTW
        if best is None or best_sim < min_similarity:
            return None
        self._touched[("fingerprints", best[0])] = self.clock()
        return best[3], tuple(json.loads(best[4])), best_sim

    # -- response audio (L1, and the fast path of repeated answers) ------------------------
    def put_response_audio(self, key: str, pcm: bytes, rate: int) -> bool:
        """Remember the synthesized audio (int16 mono ``pcm`` at ``rate`` Hz) of a response
        once per ``key`` (its text and voice); False if the write was skipped."""
        now = self.clock()
        return bool(self._run("response audio", lambda db: db.execute(
            "INSERT OR REPLACE INTO responses (key, rate, pcm, at, used_at, size) "
            "VALUES (?, ?, ?, ?, ?, ?)", [key, rate, pcm, now, now, len(pcm) + len(key)])
            and True, False))

    def get_response_audio(self, key: str) -> tuple[bytes, int] | None:
        """``(pcm, rate)`` cached for the response key, or None."""
        if self.degraded == "damaged":
            return None
        row = self._run("response audio", lambda db: db.execute(
            "SELECT pcm, rate FROM responses WHERE key = ?", [key]).fetchone(), write=False)
        if not row:
            return None
        self._touched[("responses", key)] = self.clock()
        return bytes(row[0]), row[1]

    def cache_bytes(self) -> int:
        """Bytes the two caches hold (their ``size`` columns), 0 when unreadable."""
        row = self._run("cache size", lambda db: db.execute(
            "SELECT (SELECT coalesce(sum(size), 0) FROM fingerprints)"
            " + (SELECT coalesce(sum(size), 0) FROM responses)").fetchone(), write=False)
        return int(row[0]) if row else 0
