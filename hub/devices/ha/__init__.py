"""Home Assistant over its WebSocket API: the connection (:mod:`~hub.devices.ha.client`) and
the home imported from what HA exposes to voice assistants (:mod:`~hub.devices.ha.importer`)."""
