"""Config checks that need more than types: one-line errors, the home's meaning, files named.

These modules know nothing of :mod:`hub.settings` (which calls them), so there is no cycle.
"""
