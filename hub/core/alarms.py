"""The hub's alarms and reminders: kept in its store, rung through its timer events.

:func:`make_alerts` builds the :class:`hub.act.alarms.Alerts` of a Hub on its wall clock and
zone (``[home] time_zone``), restores them from the store (late ones within the grace period
ring, older ones are reported once as missed), and adds their
:class:`hub.act.alert_ring.AlertRinger` to the timer events, so alarms ring where timers do.
"""

from __future__ import annotations

from hub.act.alarms import Alerts, from_dict, to_dict
from hub.act.alert_ring import AlertRinger
from hub.act.clocksync import sync_reader
from hub.core.timers import synthesize
from hub.store.alerts import stored_alerts


def make_alerts(hub, events) -> Alerts:
    """The alarms of ``hub`` (a :class:`hub.core.hub.Hub`), rung by ``events``; kept in
    ``hub.timer_store`` (None: memory only)."""
    cfg, store = hub.settings.alarms, hub.timer_store
    persist = (
        (lambda alerts: stored_alerts(store, [to_dict(a) for a in alerts]))
        if store is not None
        else None
    )
    alerts = Alerts(
        wall=hub.wall,
        zone_name=hub.settings.home.time_zone,
        persist=persist,
        synced=sync_reader(cfg.clock_check),
        ring_s=cfg.ring_s,
        grace_s=cfg.grace_s,
        snooze_min=cfg.snooze_min,
    )
    if store is not None:
        rows = [from_dict(r) for r in stored_alerts(store)]
        alerts.restore([a for a in rows if a is not None])
    events.sources.append(
        AlertRinger(alerts, speak=lambda text: synthesize(hub, text), ring_every_s=cfg.ring_every_s)
    )
    return alerts
