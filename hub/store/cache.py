"""The store's caches (a mixin of ``Store``): fingerprint -> transcript, response -> audio.

Both are least-recently-used: a read notes the row's use in memory and
:func:`hub.store.retention.prune` writes those times and evicts the oldest rows while the
caches hold more than ``[store] cache_mb`` (canned answers are never evicted). A cache read or
write that fails is a miss or a skip, never an error.
"""

from __future__ import annotations

import json

from hub.store import fingerprint as fpm

CANDIDATES = 3
"""LSH candidates (the most cosine-similar compact vectors) confirmed with DTW per lookup:
the best one first, the others (in one batch) only when it does not pass."""


class CacheMixin:
    """Cache calls; needs ``_run``, ``clock`` and ``_touched``."""

    # -- fingerprint -> transcript (L1) ------------------------------------------------------
    def put_fingerprint(
        self, context: str, fp: fpm.Fingerprint, transcript: str, alternatives: tuple[str, ...] = ()
    ) -> bool:
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
                    " at, used_at, size, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        context,
                        frames,
                        vector,
                        transcript,
                        json.dumps(list(alternatives)),
                        now,
                        now,
                        len(frames) + len(vector) + len(transcript),
                        fp.digest or None,
                    ],
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO fp_bands VALUES (?, ?, ?)",
                    [(context, b, cur.lastrowid) for b in fp.bands],
                )
                conn.execute("COMMIT")
                self._fp_index.current(db)
                self._fp_index.add(context, cur.lastrowid, fp.vector, fp.bands, fp.digest)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return True

        return bool(self._run("transcript cache", write, False))

    def find_fingerprint(
        self, context: str, fp: fpm.Fingerprint, min_similarity: float
    ) -> tuple[str, tuple[str, ...], float] | None:
        """``(transcript, alternatives, similarity)`` of the most similar stored utterance
        under ``context`` with a similarity of at least ``min_similarity``, or None.

        The same samples (sha256) are similarity 1.0 at once. Else LSH candidates (one band in
        common with one of the query's warps, :class:`hub.store.fpindex.FingerprintIndex`),
        the best :data:`CANDIDATES` by vector cosine, confirmed by
        :func:`hub.store.fingerprint.similarities` (DTW): the first alone, the rest together
        when it does not pass.
        """
        if fp.digest:
            found = self.find_exact(context, fp.digest)
            if found is not None:
                return (*found, 1.0)
        rows = self._fp_rows(
            context,
            lambda index: index.candidates(context, fp.vectors, fp.query_bands(), CANDIDATES),
        )
        if not rows:
            return None
        sims = fpm.similarities(fp, [fpm.unpack(rows[0][1], rows[0][2])])
        if sims[0] < min_similarity and len(rows) > 1:
            sims += fpm.similarities(fp, [fpm.unpack(r[1], r[2]) for r in rows[1:]])
        best = int(max(range(len(sims)), key=sims.__getitem__))
        if sims[best] < min_similarity:
            return None
        self._touched[("fingerprints", rows[best][0])] = self.clock()
        return rows[best][3], tuple(json.loads(rows[best][4])), sims[best]

    def find_exact(self, context: str, digest: str) -> tuple[str, tuple[str, ...]] | None:
        """``(transcript, alternatives)`` stored under ``context`` for exactly the samples
        whose sha256 is ``digest`` (:func:`hub.store.fingerprint.digest`), or None."""
        rows = self._fp_rows(
            context,
            lambda index: [fid for fid in [index.exact(context, digest)] if fid is not None],
        )
        if not rows:
            return None
        self._touched[("fingerprints", rows[0][0])] = self.clock()
        return rows[0][3], tuple(json.loads(rows[0][4]))

    def _fp_rows(self, context: str, pick) -> list:
        """The rows ``(id, frames, vector, transcript, alternatives)`` of the ids that
        ``pick(index)`` gives, in that order ([] when unreadable or damaged)."""
        if self.degraded == "damaged":
            return []

        def read(db):
            self._fp_index.current(db)
            ids = pick(self._fp_index)
            if not ids:
                return []
            found = db.execute(
                "SELECT id, frames, vector, transcript, alternatives FROM "
                f"fingerprints WHERE id IN ({', '.join('?' for _ in ids)})",
                ids,
            ).fetchall()
            by_id = {r[0]: r for r in found}
            return [by_id[i] for i in ids if i in by_id]

        return self._run("transcript cache", read, [], write=False) or []

    # -- response audio (L1, and the fast path of repeated answers) ------------------------
    def put_response_audio(self, key: str, pcm: bytes, rate: int) -> bool:
        """Remember the synthesized audio (int16 mono ``pcm`` at ``rate`` Hz) of a response
        once per ``key`` (its text and voice); False if the write was skipped."""
        now = self.clock()
        return bool(
            self._run(
                "response audio",
                lambda db: (
                    db.execute(
                        "INSERT OR REPLACE INTO responses (key, rate, pcm, at, used_at, size) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        [key, rate, pcm, now, now, len(pcm) + len(key)],
                    )
                    and True
                ),
                False,
            )
        )

    def get_response_audio(self, key: str) -> tuple[bytes, int] | None:
        """``(pcm, rate)`` cached for the response key, or None."""
        if self.degraded == "damaged":
            return None
        row = self._run(
            "response audio",
            lambda db: db.execute(
                "SELECT pcm, rate FROM responses WHERE key = ?", [key]
            ).fetchone(),
            write=False,
        )
        if not row:
            return None
        self._touched[("responses", key)] = self.clock()
        return bytes(row[0]), row[1]

    def has_response_audio(self, key: str) -> bool:
        """True when audio is cached for the response key (its row is not read or touched)."""
        if self.degraded == "damaged":
            return False
        row = self._run(
            "response audio",
            lambda db: db.execute("SELECT 1 FROM responses WHERE key = ?", [key]).fetchone(),
            write=False,
        )
        return bool(row)

    def cache_bytes(self) -> int:
        """Bytes the two caches hold (their ``size`` columns), 0 when unreadable."""
        row = self._run(
            "cache size",
            lambda db: db.execute(
                "SELECT (SELECT coalesce(sum(size), 0) FROM fingerprints)"
                " + (SELECT coalesce(sum(size), 0) FROM responses)"
            ).fetchone(),
            write=False,
        )
        return int(row[0]) if row else 0
