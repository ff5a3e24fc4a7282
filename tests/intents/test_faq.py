"""Canned answers (fallback level 3): fuzzy matching and the file format."""

import pytest

from hub.errors import ConfigError
from hub.intents.faq import DEFAULT_PATH, PLACEHOLDER_TEXT, Faq, normalize


@pytest.fixture(scope="module")
def faq():
    return Faq()


# paraphrases that are not written in faq.toml, and the answer each must get
PARAPHRASES = [
    ("What's your name?", "I'm the hub, your home's voice assistant."),
    (
        "what else can you do",
        "I can switch lights and devices, set timers, tell you the state of "
        "your home, and answer simple questions.",
    ),
    (
        "How long should I boil eggs?",
        "About six minutes for a soft egg and ten minutes for a hard one, from boiling water.",
    ),
    (
        "how long do you boil an egg for",
        "About six minutes for a soft egg and ten minutes for a hard one, from boiling water.",
    ),
    (
        "Can you help me, please?",
        "Try: turn on the kitchen light, set a timer for ten minutes, or what can you do.",
    ),
    (
        "how long should I cook pasta for",
        "Most dried pasta takes eight to twelve minutes. Check the packet.",
    ),
    (
        "What temperature should the fridge be?",
        "Keep the fridge at about four degrees Celsius and the freezer at minus eighteen.",
    ),
    ("are you listening to me", "Yes, I'm listening."),
    (
        "is it private",
        "Your voice is heard on this device and never sent anywhere. Only the commands you "
        "give go to your devices.",
    ),
    ("Hello!", "Hello! How can I help?"),
    ("Thank you.", "You're welcome."),
]


@pytest.mark.parametrize(("text", "answer"), PARAPHRASES)
def test_paraphrases_get_the_canned_answer(faq, text, answer):
    assert faq.answer(text) == answer


UNRELATED = [
    "turn on the kitchen light",
    "what's the weather like",
    "what time is it",
    "set a timer for five minutes",
    "what is the capital of france",
    "how long is left on my timer",
    "what",
    "off",
    "",
    "   ",
    "?!",
]


@pytest.mark.parametrize("text", UNRELATED)
def test_unrelated_text_gets_none(faq, text):
    assert faq.answer(text) is None


def test_match_reports_question_and_score(faq):
    found = faq.match("how long should I boil eggs")
    assert found.question == "how long should i boil an egg"
    assert 85 <= found.score < 100
    assert faq.match("what's the weather like", min_score=85) is None


def test_min_score_is_respected(faq):
    assert faq.answer("tell me something funny") is None  # scores 76
    assert (
        faq.answer("tell me something funny", min_score=70)
        == "Why did the light bulb go to school? It wanted to be brighter."
    )


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("What's the weather, please?", "what is the weather"),
        ("I’m   HERE!", "i am here"),
        ("Um, how're you?", "how are you"),
    ],
)
def test_normalize(text, normal):
    assert normalize(text) == normal


def test_shipped_file_has_about_twenty_entries_and_no_placeholder():
    import tomllib

    entries = tomllib.loads(DEFAULT_PATH.read_text())["faq"]
    assert 18 <= len(entries) <= 30
    answers = [e["answer"] for e in entries]
    assert PLACEHOLDER_TEXT not in answers
    assert "I didn't catch that." not in answers
    assert all(len(a) <= 120 for a in answers)


def test_placeholder_text():
    assert PLACEHOLDER_TEXT == "Sorry, I can't do that right now."


def test_custom_file(tmp_path):
    path = tmp_path / "faq.toml"
    path.write_text('[[faq]]\nquestions = ["where are my keys"]\nanswer = "By the door."\n')
    assert Faq(path).answer("where are my keys?") == "By the door."
    assert Faq(path).answer("hello") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not toml [", "is not valid TOML"),
        ("[x]\n", "must hold only [[faq]] tables"),
        ('[[faq]]\nquestions = ["a"]\n', "expected keys questions and answer"),
        ('[[faq]]\nquestions = ["a"]\nanswer = ""\n', "faq[0].answer: expected a non-empty"),
        ('[[faq]]\nquestions = "a"\nanswer = "b"\n', "faq[0].questions: expected a list"),
        ('[[faq]]\nquestions = ["?!"]\nanswer = "b"\n', "faq[0].questions: expected a list"),
    ],
)
def test_bad_files_are_config_errors(tmp_path, text, message):
    path = tmp_path / "faq.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        Faq(path)
    assert info.value.message.startswith("resilience.faq: ")
    assert message in info.value.message


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        Faq(tmp_path / "missing.toml")
