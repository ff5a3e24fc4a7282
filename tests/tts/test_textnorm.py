"""Text normalization for speech: number words, sentence splitting, capping (BC-08/09/10)."""

from __future__ import annotations

import random
import re

import pytest

from hub.tts.textnorm import CUT_NOTICE, cap_text, normalize, speakable, split_sentences

# BC-08: texts with nothing to say.
UNSPEAKABLE = ["", "   ", "\n\t", "...", "?!", "—", "🙂👍"]


@pytest.mark.parametrize(
    "text, spoken",
    [
        # numbers
        ("7", "seven"),
        ("21", "twenty one"),
        ("1,234 people", "one thousand two hundred thirty four people"),
        ("3.14159", "three point one four one five nine"),
        ("-4 degrees", "minus four degrees"),
        ("1st and 22nd", "first and twenty second"),
        ("007", "zero zero seven"),
        ("3/4 cup", "three quarters cup"),
        ("1/2", "one half"),
        ("10-20 minutes", "ten to twenty minutes"),
        ("room #5", "room number five"),
        ("mp3", "mp three"),
        ("version 1.2.3", "version one point two point three"),
        ("Call 555-1234", "Call five five five, one two three four"),
        # percentages
        ("75%", "seventy five percent"),
        ("12.5 %", "twelve point five percent"),
        ("10-20%", "ten to twenty percent"),
        # times
        ("9:05", "nine oh five"),
        ("9:00", "nine o'clock"),
        ("21:45", "twenty one forty five"),
        ("21:00", "twenty one hundred"),
        ("00:00", "midnight"),
        ("at 7:30 pm", "at seven thirty PM"),
        ("at 9 a.m. Then", "at nine AM. Then"),
        ("It is 9am.", "It is nine AM."),
        ("6:15:30", "six fifteen and thirty seconds"),
        # dates
        ("2024-03-05", "March fifth, twenty twenty four"),
        ("3/5/2024", "March fifth, twenty twenty four"),
        ("March 5th, 2024", "March fifth, twenty twenty four"),
        ("Dec 25", "December twenty fifth"),
        ("on 5 March", "on the fifth of March"),
        ("in 1905", "in nineteen oh five"),
        ("since 2000", "since two thousand"),
        ("the 1990s", "the nineteen nineties"),
        # units
        ("21.5°C", "twenty one point five degrees Celsius"),
        ("-5 °C outside", "minus five degrees Celsius outside"),
        ("70°F", "seventy degrees Fahrenheit"),
        ("1°", "one degree"),
        ("50 km/h", "fifty kilometers per hour"),
        ("5kWh", "five kilowatt hours"),
        ("1 m", "one meter"),
        ("0.5 kg", "zero point five kilograms"),
        ("60 W", "sixty watts"),
        ("1013 hPa", "one thousand thirteen hectopascals"),
        ("5 min", "five minutes"),
        ("1 ft", "one foot"),
        # currency
        ("$3.50", "three dollars fifty"),
        ("$1", "one dollar"),
        ("$0.99", "ninety nine cents"),
        ("$3.05", "three dollars and five cents"),
        ("$1,200", "one thousand two hundred dollars"),
        ("$2.5 million", "two point five million dollars"),
        ("€20", "twenty euros"),
        ("5€", "five euros"),
        ("£1.50", "one pound fifty"),
        # symbols, abbreviations, emoji, markup
        ("salt & pepper", "salt and pepper"),
        ("e.g. the lamp", "for example the lamp"),
        ("Dr. Smith", "Doctor Smith"),
        ("the U.S.A.", "the U S A."),
        ("turn on 🙂👍 the light", "turn on the light"),
        ("The **kitchen** light", "The kitchen light"),
        ("`code`", "code"),
        ("on — off", "on, off"),
        ("first line\nsecond line", "first line.\nsecond line"),
    ],
)
def test_normalize_reads_numbers_units_times_dates_currency(text, spoken):
    assert normalize(text) == spoken


@pytest.mark.parametrize(
    "text",
    [
        "It is 21.5°C and 45% humidity at 9:05 on 2024-03-05; that costs $3.50.",
        "Set 3 timers: 5 min, 10 min and 1,500 ms, 12 km away, 7 kg, 60 W, 2/3 full, #4, 3rd.",
        "Between 10-20% of 1990s homes used 230 V at 50 Hz, with 0.25 L and 5€ on 12/24/2023.",
    ],
)
def test_normalize_leaves_no_digits_or_symbols(text):
    spoken = normalize(text)
    assert not re.search(r"[0-9$€£%°#&@/*_`{}]", spoken), spoken


def test_normalize_keeps_sentence_ends_and_plain_text():
    text = "Is the back door locked? Yes, it was locked at nine. The porch light is still on."
    assert normalize(text) == text


@pytest.mark.parametrize("text", UNSPEAKABLE)
def test_nothing_to_say_is_not_speakable_before_or_after_normalizing(text):
    assert speakable(text) is False
    assert speakable(normalize(text)) is False
    assert split_sentences(normalize(text), 200) == []


@pytest.mark.parametrize("text", ["a", "7", "ok.", "¿Sí?", "🙂 yes"])
def test_text_with_a_letter_or_digit_is_speakable(text):
    assert speakable(text) is True


@pytest.mark.parametrize(
    "text, sentences",
    [
        (
            "Is the back door locked? Yes, it was locked at nine. The porch light is still on.",
            [
                "Is the back door locked?",
                "Yes, it was locked at nine.",
                "The porch light is still on.",
            ],
        ),
        ("Wow! Really?! Yes... it is.", ["Wow!", "Really?!", "Yes...", "it is."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("one line\nanother line", ["one line", "another line"]),
        ("No final stop", ["No final stop"]),
        ("Hello. ... World.", ["Hello.", "World."]),
    ],
)
def test_split_sentences_at_sentence_punctuation(text, sentences):
    assert split_sentences(text, 200) == sentences


def test_long_sentence_splits_at_clauses_then_words():
    text = (
        "the hall light is on, the kitchen light is off; the porch light is on: "
        "and the garage door is closed"
    )
    assert split_sentences(text, 40) == [
        "the hall light is on,",
        "the kitchen light is off;",
        "the porch light is on:",
        "and the garage door is closed",
    ]
    words = "the living room lamp is on and " * 10
    pieces = split_sentences(words, 50)
    assert all(len(p) <= 50 for p in pieces)
    assert " ".join(pieces).split() == words.split()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("max_chars", [1, 7, 30, 200])
def test_split_sentences_never_cuts_a_word(seed, max_chars):
    rng = random.Random(seed)
    vocab = ["light", "on", "kitchen", "thermostat", "is", "the", "a", "supercalifragilistic"]
    punct = ["", "", "", ",", ".", "?", ";"]
    text = " ".join(rng.choice(vocab) + rng.choice(punct) for _ in range(120))
    pieces = split_sentences(text, max_chars)
    assert " ".join(pieces).split() == text.split()
    assert all(len(p) <= max_chars or " " not in p for p in pieces)


def test_cap_text_keeps_short_text_whole():
    assert cap_text("The light is on.", 600) == ("The light is on.", False)


def test_cap_text_cuts_at_the_last_sentence_within_the_limit():
    text = "The light is on. The door is locked. The heating is at twenty degrees."
    assert cap_text(text, 45) == ("The light is on. The door is locked.", True)


def test_cap_text_without_punctuation_cuts_between_words_and_ends_the_sentence():
    text = ("the living room lamp is on and " * 60).strip()  # BC-10a, ~1,800 characters
    capped, cut = cap_text(text, 600)
    assert cut is True
    assert len(capped) <= 601 and capped.endswith(".")
    body = capped[:-1]
    assert text.startswith(body) and text[len(body)] == " "  # ends at a word boundary


def test_cap_text_prefers_a_word_boundary_over_a_sentence_end_that_keeps_too_little():
    text = "Yes. " + "the lamp is on and " * 40
    capped, cut = cap_text(text, 100)
    assert cut is True and len(capped) > 50 and capped.endswith(".")
    assert text.startswith(capped[:-1])


def test_cap_text_never_cuts_one_giant_word():
    assert cap_text("x" * 50, 10) == ("", True)


def test_cut_notice_is_a_speakable_sentence():
    assert split_sentences(CUT_NOTICE, 200) == [CUT_NOTICE]


def test_bad_limits_are_rejected():
    with pytest.raises(ValueError):
        split_sentences("a", 0)
    with pytest.raises(ValueError):
        cap_text("a", 0)
