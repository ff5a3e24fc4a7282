"""Process resource counts for the soak test: threads, open file descriptors, RSS."""

from __future__ import annotations


def process_counts(pid: int | None = None) -> dict:
    """``{"threads": int, "fds": int | None, "rss_bytes": int}`` of process ``pid`` (default:
    this one), via psutil. ``fds`` is None where the platform has no file descriptors
    (Windows)."""
    import psutil  # lazy: psutil (about 75 ms) is not for hub --help, which imports resilience/

    proc = psutil.Process(pid)
    with proc.oneshot():
        fds = proc.num_fds() if hasattr(proc, "num_fds") else None
        return {"threads": proc.num_threads(), "fds": fds, "rss_bytes": proc.memory_info().rss}
