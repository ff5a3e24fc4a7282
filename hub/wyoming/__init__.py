"""A Wyoming protocol server, so Home Assistant can use the hub (issue 10).

The hub offers four programs on one port: ``asr`` (its recognizer, restricted to the home's
vocabulary), ``tts`` (Piper, streaming), ``wake`` (microWakeWord) and ``handle``/``intent``
(the whole turn graph as a conversation agent). One handler per connection
(:mod:`hub.wyoming.handler`); every read and write has a timeout (:mod:`hub.wyoming.framing`).
Protocol: github.com/OHF-Voice/wyoming (``wyoming`` package, pinned ``>=1.7,<2``).

Public API: :func:`hub.wyoming.server.serve`, :func:`hub.wyoming.server.start_wyoming`.
"""

DEFAULT_URI = "tcp://0.0.0.0:10700"
"""Where ``hub wyoming`` listens unless told otherwise (here, so ``hub --help`` need not
import the server and the turn graph)."""
