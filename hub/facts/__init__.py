"""Facts only from their source: the clock, the weather entity and ``[home]``.

Time, date, weekday, month, year, weather, forecasts, temperatures, humidity and device states
are never spoken from a language model's own words. Two checks in code, not only in a prompt:
:mod:`hub.facts.answers` answers a fact question from its source (:func:`~hub.facts.answers.
route`), and :mod:`hub.facts.claims` finds an LLM answer that claims a fact
(:func:`~hub.facts.claims.made_up`). :mod:`hub.facts.topics` reads what a question asks (an
English keyword grammar, no model); :mod:`hub.facts.changing` finds the facts that change over
time (who holds an office now, the latest, prices, scores), which no source here holds and a
model offline only knows as they were.
"""
