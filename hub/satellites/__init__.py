"""Satellites as a role of the hub: the hub is the voice server of Wyoming satellites.

A ``wyoming-satellite`` is a TCP server; the hub connects to each configured one
(``[[satellites]]``) as its client (:mod:`hub.satellites.link`), converts its audio chunk by
chunk (:mod:`hub.satellites.convert`), endpoints it, runs the turn in the satellite's own
conversation and area, and sends the answer back. One wake heard by several satellites is
one turn (:mod:`hub.satellites.claims`).
"""
