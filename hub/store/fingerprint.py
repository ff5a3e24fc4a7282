"""Acoustic fingerprint of an utterance: MFCC frames, LSH bands, DTW confirmation.

Method: the classic template matcher of isolated-word recognition, indexed the way
audio-search systems index features.

- Features: MFCCs (Davis & Mermelstein 1980, "Comparison of parametric representations for
  monosyllabic word recognition", IEEE TASSP 28(4)) of the speech part only (leading and
  trailing silence trimmed by frame energy), c1..c8 with cepstral mean normalization, so a
  gain change (a constant in the log-mel domain) cancels out. Only the low cepstra are kept:
  the higher ones follow the fine spectral detail that moves with pitch.
- Speed and voice: the same words said faster or by a slightly different voice move the
  spectrum along the frequency axis. A query is therefore also computed with its mel
  filterbank warped by the factors in :data:`WARPS`, the search of vocal tract length
  normalization (Lee & Rose 1996, "Speaker normalization using efficient frequency warping
  procedures", ICASSP); stored utterances keep the unwarped features only.
- Index: a compact vector (mean MFCCs over :data:`SEGMENTS` equal time segments) hashed with
  random-hyperplane LSH (Charikar 2002, "Similarity estimation techniques from rounding
  algorithms", STOC), :data:`BANDS` bands of :data:`BITS` bits: a stored utterance is a
  candidate when one band agrees with one of the query's warps (the banding of Leskovec,
  Rajaraman & Ullman, "Mining of Massive Datasets", ch. 3.4).
- Confirmation: dynamic time warping (Sakoe & Chiba 1978, "Dynamic programming algorithm
  optimization for spoken word recognition", IEEE TASSP 26(1)) of the frame sequences, cost
  ``1 - cosine``, for every (warp, candidate) pair at once. The similarity is ``1 -`` the
  worst mean cost of any :data:`WINDOW`-frame stretch of the best warp's path, so one
  different word ("on"/"off", "5"/"10") is enough to refuse a match that is otherwise almost
  the same.
- An exact replay (the same samples) is found by its sha256 before any of this.

Input everywhere: int16 (or float) mono samples at :data:`RATE` Hz as a numpy array.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from itertools import pairwise

import numpy as np

from hub.audio.format import RATE

FRAME, HOP = 400, 320  # 25 ms frames every 20 ms
N_MELS, DIM = 32, 8  # c1..c8 kept (c0, the level, is dropped)
WARPS = (1.0, 0.95, 1.05)  # query filterbank warps; WARPS[0] (none) is what is stored
SEGMENTS = 6  # time segments of the compact vector
BANDS, BITS = 16, 10  # LSH: 16 bands of 10 hyperplane bits
WINDOW = 12  # DTW path steps (about 240 ms) of the local similarity
TRIM_DB = 35.0  # frames this far below the loudest are silence at the ends
EDGE = 5  # frames at each end that show the background noise
QUIET_EDGE_DB = 12.0  # an edge this far below the loudest frame is background
NOISE_MARGIN_DB = 0.5  # speech frames are this much above the background
FLOOR = 10 ** (-25 / 10)  # mel energies 25 dB below the loudest are one floor
MIN_FRAMES = 8  # shorter speech (160 ms) gets no fingerprint
BLOCK = 32  # query frames per matrix product (see _cosines)
_PAD_COST = 4.0  # DTW cost of the padding after a shorter candidate (above 2)


@dataclass(frozen=True)
class Fingerprint:
    """One utterance's fingerprint: one or more readings of it.

    A stored utterance has one reading (unwarped, the usual trim); a query also has its
    other :data:`WARPS` and, when noise fills its pauses, the same again trimmed above that
    noise (:func:`compute`).

    Attributes:
        frames: per reading, float32 ``(n, DIM)`` unit-length CMN MFCC frames, 20 ms apart;
            ``frames[0]`` is the unwarped, usually trimmed one.
        vectors: float32 ``(readings, SEGMENTS*DIM)`` unit-length compact vectors.
        digest: sha256 (hex) of the int16 samples, "" when read back from the store.
    """

    frames: tuple[np.ndarray, ...]
    vectors: np.ndarray
    digest: str = ""

    @property
    def vector(self) -> np.ndarray:
        """The first reading's compact vector, ``(SEGMENTS*DIM,)``."""
        return self.vectors[0]

    @property
    def bands(self) -> tuple[int, ...]:
        """The ``BANDS`` LSH band hashes of the first reading (what the store files it under)."""
        return band_hashes(self.vectors[0])

    def query_bands(self) -> set[int]:
        """The band hashes of every reading (a stored utterance sharing one is a candidate)."""
        return {b for v in self.vectors for b in band_hashes(v)}


def _mel_filters(warp: float = 1.0) -> np.ndarray:
    """``(N_MELS, FRAME//2+1)`` triangular mel filters, 60 Hz..7.6 kHz (HTK mel scale), their
    edges multiplied by ``warp``."""

    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    edges = hz(np.linspace(mel(60.0), mel(7600.0), N_MELS + 2)) * warp
    bins = np.fft.rfftfreq(FRAME, 1.0 / RATE)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (bins - lo) / (mid - lo)
    down = (hi - bins) / (hi - mid)
    return np.maximum(0.0, np.minimum(up, down)).astype(np.float32)


_MELS = np.stack([_mel_filters(w) for w in WARPS])  # (w, N_MELS, bins)
_DCT = np.cos(
    np.pi / N_MELS * (np.arange(N_MELS)[None, :] + 0.5) * np.arange(1, DIM + 1)[:, None]
).astype(np.float32)  # (DIM, N_MELS)
_PLANES = (
    np.random.default_rng(20260801)
    .standard_normal((BANDS * BITS, SEGMENTS * DIM))
    .astype(np.float32)
)
_WINDOW_FN = np.hamming(FRAME).astype(np.float32)
_WEIGHTS = 1 << np.arange(BITS)


def _frames(samples: np.ndarray) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float32)
    if x.size < FRAME:
        return np.zeros((0, FRAME), np.float32)
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])  # pre-emphasis
    n = 1 + (x.size - FRAME) // HOP
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    return x[idx] * _WINDOW_FN


def digest(samples) -> str:
    """sha256 (hex) of the samples as int16 (what an exact replay has in common)."""
    x = np.asarray(samples)
    if x.dtype != np.int16:
        x = np.clip(x, -32768, 32767).astype(np.int16)
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


def compute(samples, query: bool = True) -> Fingerprint | None:
    """The fingerprint of ``samples`` (int16 mono 16 kHz), or None when there is too little speech.

    Level does not matter (CMN). Trim: leading/trailing frames ``TRIM_DB`` below the
    loudest go. ``query``: also the readings a lookup compares (the other :data:`WARPS`,
    and all warps trimmed above the background noise when that trims more); False: only the
    first reading, all the store keeps.
    """
    frames = _frames(samples)
    if len(frames) < MIN_FRAMES:
        return None
    power = np.abs(np.fft.rfft(frames, axis=1)).astype(np.float32) ** 2
    energy_db = 10 * np.log10(power.sum(axis=1) + 1e-9)
    spans = [_span(energy_db > energy_db.max() - TRIM_DB)]
    if query:
        quiet = _span(_above_noise(energy_db))
        if quiet != spans[0] and quiet[1] - quiet[0] >= MIN_FRAMES:
            spans.append(quiet)
    if spans[0][1] - spans[0][0] < MIN_FRAMES:
        return None
    mels = _MELS if query else _MELS[:1]
    readings = [r for a, b in spans for r in _readings(power[a:b], mels)]
    return Fingerprint(
        tuple(f for f, _ in readings), np.stack([v for _, v in readings]), digest(samples)
    )


def _span(keep: np.ndarray) -> tuple[int, int]:
    idx = np.flatnonzero(keep)
    return (int(idx[0]), int(idx[-1]) + 1) if len(idx) else (0, 0)


def _readings(power: np.ndarray, mels: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(frames, vector)`` of the power spectra ``(n, bins)`` through each filterbank."""
    mel = np.einsum("tf,wmf->wtm", power, mels)  # (w, n, N_MELS)
    logmel = np.log(np.maximum(mel, mel.max(axis=(1, 2), keepdims=True) * FLOOR) + 1e-6)
    ceps = logmel @ _DCT.T  # (w, n, DIM)
    ceps -= ceps.mean(axis=1, keepdims=True)
    bounds = np.linspace(0, ceps.shape[1], SEGMENTS + 1).astype(int)
    vectors = np.stack([ceps[:, a:b].mean(axis=1) for a, b in pairwise(bounds)], axis=1).reshape(
        len(mels), -1
    )
    frames, vectors = _unit(ceps).astype(np.float32), _unit(vectors).astype(np.float32)
    return list(zip(frames, vectors, strict=True))


def _above_noise(energy_db: np.ndarray) -> np.ndarray:
    """Frames within ``TRIM_DB`` of the loudest and, when the file starts or ends in a
    steady background (the loudest of its first or last ``EDGE`` frames, the quieter end,
    ``QUIET_EDGE_DB`` below the loudest frame), ``NOISE_MARGIN_DB`` above that background."""
    top = energy_db.max()
    edge = min(energy_db[:EDGE].max(), energy_db[-EDGE:].max())
    threshold = top - TRIM_DB
    if edge < top - QUIET_EDGE_DB:
        threshold = max(threshold, edge + NOISE_MARGIN_DB)
    return energy_db > threshold


def _unit(a: np.ndarray) -> np.ndarray:
    return a / (np.linalg.norm(a, axis=-1, keepdims=True) + 1e-9)


def band_hashes(vector: np.ndarray) -> tuple[int, ...]:
    """The ``BANDS`` LSH band hashes (``BITS``-bit ints, the band number in the high bits)."""
    bits = ((_PLANES @ vector) > 0).reshape(BANDS, BITS)
    return tuple(int(h) for h in (bits @ _WEIGHTS) + (np.arange(BANDS) << BITS))


def dtw_accumulate(cost: np.ndarray) -> np.ndarray:
    """Accumulated DTW costs of a batch of local-cost matrices ``cost (k, n, m)``: ``(k, n, m)``.

    Steps (1,1), (1,0), (0,1) (Sakoe & Chiba 1978, symmetric, no slope limit). Each row of
    every matrix is computed at once: with ``S`` the row's cumulative cost,
    ``D[i] = S + min.accumulate(A - S)`` where ``A`` comes from the row above.
    """
    k, n, m = cost.shape
    acc = np.empty_like(cost)
    sums = np.cumsum(cost, axis=2)
    rest = cost - sums  # cost[i] - S[i], for every row at once
    acc[:, 0] = sums[:, 0]
    for i in range(1, n):
        prev, row = acc[:, i - 1], acc[:, i]
        row[:, 0] = prev[:, 0]
        np.minimum(prev[:, 1:], prev[:, :-1], out=row[:, 1:])
        row += rest[:, i]
        np.minimum.accumulate(row, axis=1, out=row)
        row += sums[:, i]
    return acc


def _path_costs(acc: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The local costs along the optimal path of one accumulated matrix ``acc (n, m)``."""
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    at = acc.item
    path_i, path_j = [i], [j]
    while i > 0 and j > 0:
        diag, up, left = at(i - 1, j - 1), at(i - 1, j), at(i, j - 1)
        if diag <= up and diag <= left:
            i, j = i - 1, j - 1
        elif up <= left:
            i -= 1
        else:
            j -= 1
        path_i.append(i)
        path_j.append(j)
    path_i += range(i - 1, -1, -1)  # then along the first column or row to (0, 0)
    path_j += [0] * i
    path_i += [0] * j
    path_j += range(j - 1, -1, -1)
    return cost[path_i, path_j]  # end to start (a window's mean does not mind)


def _window_similarity(costs: np.ndarray) -> float:
    if len(costs) <= WINDOW:
        return float(1.0 - costs.mean())
    sums = np.cumsum(np.concatenate(([0.0], costs)))
    return float(1.0 - (sums[WINDOW:] - sums[:-WINDOW]).max() / WINDOW)


def _cosines(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``q (k, n, d) @ r (k, m, d)^T`` as ``(k, n, m)``, in blocks of :data:`BLOCK` rows: a
    product of more than about 500k multiply-adds wakes OpenBLAS's threads, which costs
    10-30 ms on a busy machine (measured) against well under 1 ms single-threaded."""
    out = np.empty((q.shape[0], q.shape[1], r.shape[1]), dtype=np.float32)
    rt = r.transpose(0, 2, 1)
    for start in range(0, q.shape[1], BLOCK):
        np.matmul(q[:, start : start + BLOCK], rt, out=out[:, start : start + BLOCK])
    return out


def similarities(query: Fingerprint, stored: list[Fingerprint]) -> list[float]:
    """The similarity of ``query`` to each of ``stored`` (its first reading), 0.0 .. 1.0.

    For each stored utterance, the query's reading whose compact vector is the most
    cosine-similar is aligned to it by DTW (one batch for all); the similarity is ``1 -``
    the worst mean local cost over any ``WINDOW`` steps of the path (1.0: the same frames);
    0.0 for an utterance more than twice as long or short.
    """
    picked = np.argmax(np.stack([s.vector for s in stored]) @ query.vectors.T, axis=1)
    pairs = [
        (i, query.frames[int(v)], s.frames[0])
        for i, (v, s) in enumerate(zip(picked, stored, strict=True))
    ]
    pairs = [p for p in pairs if max(len(p[1]), len(p[2])) <= 2 * min(len(p[1]), len(p[2]))]
    out = [0.0] * len(stored)
    if not pairs:
        return out
    rows, cols = max(len(p[1]) for p in pairs), max(len(p[2]) for p in pairs)
    q = np.zeros((len(pairs), rows, DIM), dtype=np.float32)
    r = np.zeros((len(pairs), cols, DIM), dtype=np.float32)
    for k, (_, a, b) in enumerate(pairs):
        q[k, : len(a)], r[k, : len(b)] = a, b
    cost = 1.0 - _cosines(q, r)  # (k, rows, cols)
    for k, (_, a, b) in enumerate(pairs):
        cost[k, len(a) :], cost[k, :, len(b) :] = _PAD_COST, _PAD_COST
    acc = dtw_accumulate(cost)
    for k, (i, a, b) in enumerate(pairs):
        n, m = len(a), len(b)
        out[i] = _window_similarity(_path_costs(acc[k, :n, :m], cost[k, :n, :m]))
    return out


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    """The similarity of ``a`` (all its warps) to ``b`` (unwarped), see :func:`similarities`."""
    return similarities(a, [b])[0]


def pack(fp: Fingerprint) -> tuple[bytes, bytes]:
    """``(frames, vector)`` of the first reading as bytes for the store (float16 frames,
    float32 vector)."""
    return fp.frames[0].astype(np.float16).tobytes(), fp.vector.astype(np.float32).tobytes()


def unpack(frames: bytes, vector: bytes) -> Fingerprint:
    """The inverse of :func:`pack`: a one-reading fingerprint without a digest."""
    f = np.frombuffer(frames, dtype=np.float16).astype(np.float32).reshape(-1, DIM)
    v = np.frombuffer(vector, dtype=np.float32).reshape(1, -1)
    return Fingerprint((f,), v)


def context_key(settings) -> str:
    """A hash of what changes a transcript: the ASR settings (engine, model), the home's
    vocabulary (areas, entities) and the intent settings; 16 hex digits."""
    parts = {
        "asr": asdict(settings.asr),
        "home": asdict(settings.home),
        "intents": asdict(settings.intents),
    }
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
