"""Sentence streaming for spoken answers."""

from __future__ import annotations

import threading

from hub.llm.markup import clean_sentence
from hub.llm.stream import split_sentences, stream_sentences


def test_each_sentence_is_yielded_as_soon_as_it_ends():
    seen = []

    def pieces():
        for piece in ["The porch", " light is on.", " It was", " turned on at nine", "."]:
            seen.append(piece)
            yield piece

    stream = stream_sentences(pieces())
    assert next(stream) == "The porch light is on."
    # the first sentence came out before the rest of the text was generated
    assert seen == ["The porch", " light is on.", " It was"]
    assert list(stream) == ["It was turned on at nine."]


def test_at_most_two_sentences_and_the_source_is_closed():
    closed = []

    def pieces():
        try:
            yield from ["One. ", "Two! ", "Three? ", "Four."]
        finally:
            closed.append(True)

    assert list(stream_sentences(pieces(), max_sentences=2)) == ["One.", "Two!"]
    assert closed == [True]


def test_numbers_abbreviations_and_quotes_do_not_split():
    text = 'It is 21.5 degrees, e.g. warm. Dr. Who said "hi." Then left'
    assert split_sentences(text) == [
        "It is 21.5 degrees, e.g. warm.",
        'Dr. Who said "hi."',
        "Then left",
    ]


def test_markup_and_json_never_reach_tts():
    text = 'Sure! ```json {"intent": "answer"} ``` The **light** is on. #'
    out = split_sentences(text)
    assert out == ["Sure!", 'json "intent": "answer" The light is on.']
    assert not any(ch in s for s in out for ch in "{}`")


def test_text_without_letters_or_digits_is_nothing_to_say():
    for text in ["", "   ", "\n\t", "...", "?!", "—", "🙂👍"]:
        assert split_sentences(text) == []
    assert clean_sentence("... ok") == "... ok"


def test_cancel_stops_before_the_next_piece():
    cancel = threading.Event()

    def pieces():
        yield "First sentence. "
        cancel.set()
        yield "Second sentence. "
        yield "Third."

    assert list(stream_sentences(pieces(), cancel=cancel)) == ["First sentence."]
