"""Acoustic fingerprint of an utterance: MFCC frames, LSH bands, DTW confirmation.

Method: the classic template matcher of isolated-word recognition, indexed the way
audio-search systems index features.

- Features: MFCCs (Davis & Mermelstein 1980, "Comparison of parametric representations for
  monosyllabic word recognition", IEEE TASSP 28(4)) of the speech part only (leading and
  trailing silence trimmed by frame energy), c1..c12 with cepstral mean normalization, so a
  gain change (a constant in the log-mel domain) cancels out.
- Index: a compact vector (mean MFCCs over :data:`SEGMENTS` equal time segments) hashed with
  random-hyperplane LSH (Charikar 2002, "Similarity estimation techniques from rounding
  algorithms", STOC), :data:`BANDS` bands of :data:`BITS` bits: a stored utterance is a
  candidate when one band agrees (the banding of Leskovec, Rajaraman & Ullman, "Mining of
  Massive Datasets", ch. 3.4).
- Confirmation: dynamic time warping (Sakoe & Chiba 1978, "Dynamic programming algorithm
  optimization for spoken word recognition", IEEE TASSP 26(1)) of the frame sequences, cost
  ``1 - cosine``. The similarity is ``1 -`` the worst mean cost of any :data:`WINDOW`-frame
  stretch of the path, so one different word ("on"/"off", "5"/"10") is enough to refuse a
  match that is otherwise almost the same.

Input everywhere: int16 (or float) mono samples at :data:`RATE` Hz as a numpy array.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np

RATE = 16000
FRAME, HOP = 400, 320          # 25 ms frames every 20 ms
N_MELS, N_CEPS = 32, 13        # c0 is dropped: 12 coefficients kept
SEGMENTS = 6                   # time segments of the compact vector
BANDS, BITS = 16, 10           # LSH: 16 bands of 10 hyperplane bits
WINDOW = 18                    # DTW path steps (about 360 ms) of the local similarity
TRIM_DB = 35.0                 # frames this far below the loudest are silence at the ends
FLOOR = 10 ** (-25 / 10)      # mel energies 25 dB below the loudest are one floor
MIN_FRAMES = 8                 # shorter speech (160 ms) gets no fingerprint


@dataclass(frozen=True)
class Fingerprint:
    """One utterance's fingerprint.

    Attributes:
        frames: float32 ``(n, 12)`` unit-length CMN MFCC frames, 20 ms apart.
        vector: float32 ``(SEGMENTS*12,)`` unit-length compact vector.
        bands: ``BANDS`` ints, the LSH band hashes of ``vector``.
    """

    frames: np.ndarray
    vector: np.ndarray
    bands: tuple[int, ...]


def _mel_filters() -> np.ndarray:
    """``(N_MELS, FRAME//2+1)`` triangular mel filters, 60 Hz..7.6 kHz (HTK mel scale)."""
    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    edges = hz(np.linspace(mel(60.0), mel(7600.0), N_MELS + 2))
    bins = np.fft.rfftfreq(FRAME, 1.0 / RATE)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (bins - lo) / (mid - lo)
    down = (hi - bins) / (hi - mid)
    return np.maximum(0.0, np.minimum(up, down)).astype(np.float32)


_MEL = _mel_filters()
_DCT = np.cos(np.pi / N_MELS * (np.arange(N_MELS)[None, :] + 0.5)
              * np.arange(N_CEPS)[:, None]).astype(np.float32)
_PLANES = np.random.default_rng(20260801).standard_normal(
    (BANDS * BITS, SEGMENTS * (N_CEPS - 1))).astype(np.float32)
_WINDOW_FN = np.hamming(FRAME).astype(np.float32)


def _frames(samples: np.ndarray) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float32)
    if x.size < FRAME:
        return np.zeros((0, FRAME), np.float32)
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])  # pre-emphasis
    n = 1 + (x.size - FRAME) // HOP
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    return x[idx] * _WINDOW_FN


def compute(samples) -> Fingerprint | None:
    """The fingerprint of ``samples`` (int16 mono 16 kHz), or None when there is too little speech.

    Level does not matter (CMN); leading/trailing frames ``TRIM_DB`` below the loudest go.
    """
    frames = _frames(samples)
    if len(frames) < MIN_FRAMES:
        return None
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    energy_db = 10 * np.log10(power.sum(axis=1) + 1e-9)
    voiced = np.flatnonzero(energy_db > energy_db.max() - TRIM_DB)
    power = power[voiced[0]:voiced[-1] + 1]
    if len(power) < MIN_FRAMES:
        return None
    mel = power @ _MEL.T
    logmel = np.log(np.maximum(mel, mel.max() * FLOOR) + 1e-6)
    ceps = (logmel @ _DCT.T)[:, 1:]
    ceps -= ceps.mean(axis=0)
    frames_n = _unit(ceps)
    segs = np.array_split(ceps, SEGMENTS)
    vector = _unit(np.concatenate([s.mean(axis=0) for s in segs]))
    return Fingerprint(frames_n.astype(np.float32), vector.astype(np.float32), band_hashes(vector))


def _unit(a: np.ndarray) -> np.ndarray:
    return a / (np.linalg.norm(a, axis=-1, keepdims=True) + 1e-9)


def band_hashes(vector: np.ndarray) -> tuple[int, ...]:
    """The ``BANDS`` LSH band hashes (``BITS``-bit ints, the band number in the high bits)."""
    bits = (_PLANES @ vector) > 0
    weights = 1 << np.arange(BITS)
    return tuple(int(b * (1 << BITS) + (bits[b * BITS:(b + 1) * BITS] * weights).sum())
                 for b in range(BANDS))


def dtw_path_costs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Local costs ``1 - cos`` along the DTW path of unit frames ``a (n, d)`` and ``b (m, d)``.

    Steps (1,1), (1,0), (0,1) (Sakoe & Chiba 1978, symmetric, no slope limit). Each row is
    computed at once: with ``S`` the row's cumulative cost, ``D[i] = S + min.accumulate(A - S)``
    where ``A`` comes from the row above.
    """
    cost = 1.0 - a @ b.T
    n, m = cost.shape
    acc = np.empty_like(cost)
    sums = np.cumsum(cost, axis=1)
    acc[0] = sums[0]
    above = np.empty(m, dtype=cost.dtype)
    entry = np.empty(m, dtype=cost.dtype)
    for i in range(1, n):
        prev = acc[i - 1]
        above[0] = prev[0]
        np.minimum(prev[1:], prev[:-1], out=above[1:])
        np.add(cost[i], above, out=entry)
        np.subtract(entry, sums[i], out=entry)
        np.minimum.accumulate(entry, out=entry)
        np.add(sums[i], entry, out=acc[i])
    return _backtrack(acc, cost)


def _backtrack(acc: np.ndarray, cost: np.ndarray) -> np.ndarray:
    pad = np.full((acc.shape[0] + 1, acc.shape[1] + 1), np.inf)
    pad[1:, 1:] = acc
    step = np.argmin(np.stack((pad[:-1, :-1], pad[:-1, 1:], pad[1:, :-1])), axis=0)
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    out = [cost[i, j]]
    while i > 0 or j > 0:
        k = 2 if i == 0 else 1 if j == 0 else step[i, j]
        i, j = (i - 1, j - 1) if k == 0 else (i - 1, j) if k == 1 else (i, j - 1)
        out.append(cost[i, j])
    return np.asarray(out[::-1])


def similarity(a: Fingerprint, b: Fingerprint) -> float:
    """``1 -`` the worst mean DTW cost over any ``WINDOW`` steps (1.0: the same frames)."""
    n, m = len(a.frames), len(b.frames)
    if max(n, m) > 2 * min(n, m):  # more than twice as long: not the same command
        return 0.0
    costs = dtw_path_costs(a.frames, b.frames)
    if len(costs) <= WINDOW:
        return float(1.0 - costs.mean())
    window = np.convolve(costs, np.ones(WINDOW) / WINDOW, mode="valid")
    return float(1.0 - window.max())


def pack(fp: Fingerprint) -> tuple[bytes, bytes]:
    """``(frames, vector)`` as bytes for the store (float16 frames, float32 vector)."""
    return fp.frames.astype(np.float16).tobytes(), fp.vector.astype(np.float32).tobytes()


def unpack(frames: bytes, vector: bytes) -> Fingerprint:
    """The inverse of :func:`pack` (bands recomputed from the vector)."""
    f = np.frombuffer(frames, dtype=np.float16).astype(np.float32).reshape(-1, N_CEPS - 1)
    v = np.frombuffer(vector, dtype=np.float32)
    return Fingerprint(f, v, band_hashes(v))


def context_key(settings) -> str:
    """A hash of what changes a transcript: the ASR settings (engine, model), the home's
    vocabulary (areas, entities) and the intent settings; 16 hex digits."""
    parts = {"asr": asdict(settings.asr), "home": asdict(settings.home),
             "intents": asdict(settings.intents)}
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
