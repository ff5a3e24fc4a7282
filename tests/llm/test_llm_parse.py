"""Table tests of the pure LLM output parser (cases BC-13 and BC-15, one row each)."""

from __future__ import annotations

import pytest

from hub.errors import InvalidOutputError
from hub.llm.parse import LlmIntent, Vocabulary, check_output, iter_json_objects, parse_intent

# The vocabulary the cases use (their intent "light_on", areas Kitchen and Hall).
CASE = dict(
    allowed_intents=("light_on",),
    entity_names=("Kitchen Light",),
    area_names=("Kitchen", "Hall"),
    sensitive_names=(),
    min_confidence=0.6,
)
# The shipped home's names and the default whitelist.
HOME = dict(
    allowed_intents=("HassTurnOn", "HassTurnOff", "HassLightSet", "HassGetState"),
    entity_names=("Kitchen Light", "Front Door", "Garage Door", "Bed Light"),
    area_names=("Kitchen", "Office"),
    sensitive_names=("Front Door", "Garage Door"),
    min_confidence=0.6,
)

KITCHEN = '{"intent": "light_on", "slots": {"room": "kitchen"}, "confidence": 0.92}'


def _intent(raw, intent, slots, conf, confirm=False):
    return LlmIntent(intent, slots, conf, confirm, raw)


BC13 = [
    f"```json\n{KITCHEN}\n```",
    f"```\n{KITCHEN}\n```",
    f"Sure! Here you go: {KITCHEN} Hope that helps.",
]


@pytest.mark.parametrize("raw", BC13)
def test_bc13_fenced_or_wrapped_json_parses_to_the_same_intent(raw):
    assert parse_intent(raw, **CASE) == _intent(raw, "light_on", {"area": "Kitchen"}, 0.92)


def test_bc13_no_json_at_all_raises_invalid_output():
    with pytest.raises(InvalidOutputError) as info:
        parse_intent("I cannot answer in JSON right now.", **CASE)
    assert info.value.kind == "invalid_output"


BC15 = [
    # wrong key case: keys and values folded, but no confidence -> not acted on
    ('{"Intent":"LIGHT_ON","Slots":{"Room":"Kitchen"}}', "bad_confidence"),
    ('{"slots":{"room":"kitchen"}}', "no_intent"),
    ('{"intent":"light_on","confidence":"high"}', "bad_confidence"),
    ('{"intent":"unlock_front_door"}', "unknown_intent"),
    ('{"intent":"light_on","slots":{"room":["kitchen","hall"]}}', "list_slot"),
    ('{"intent":"light_on","slots":{"room":"garage"},"confidence":0.9}', "unknown_area"),
]


@pytest.mark.parametrize(("raw", "reason"), BC15)
def test_bc15_semantically_wrong_output_is_not_acted_on(raw, reason):
    assert parse_intent(raw, **CASE) is None
    vocab = Vocabulary(CASE["allowed_intents"], CASE["entity_names"], CASE["area_names"])
    assert check_output(raw, vocab, 0.6).reason == reason


def test_bc15_unknown_room_is_named_in_the_spoken_refusal():
    vocab = Vocabulary(CASE["allowed_intents"], CASE["entity_names"], CASE["area_names"])
    rejection = check_output(
        '{"intent":"light_on","slots":{"room":"garage"},"confidence":0.9}', vocab, 0.6
    )
    assert rejection.message == "I don't know a room called garage."


def test_bc15_confidence_above_one_is_clamped_and_needs_confirmation():
    raw = '{"intent":"light_on","confidence":1.7}'
    assert parse_intent(raw, **CASE) == _intent(raw, "light_on", {}, 1.0, confirm=True)


def test_bc15_wrong_case_with_confidence_is_normalised_to_canonical_names():
    raw = '{"Intent":"LIGHT_ON","Slots":{"Room":"KITCHEN"},"Confidence":0.8}'
    assert parse_intent(raw, **CASE) == _intent(raw, "light_on", {"area": "Kitchen"}, 0.8)


HOME_ROWS = [
    (
        '{"intent":"hassturnon","slots":{"name":"kitchen light"},"confidence":0.9}',
        _intent("", "HassTurnOn", {"name": "Kitchen Light"}, 0.9),
    ),
    (
        '{"intent":"HassLightSet","slots":{"name":"Bed Light","brightness":40},"confidence":1}',
        _intent("", "HassLightSet", {"name": "Bed Light", "brightness": 40}, 1.0),
    ),
    (
        '{"intent":"HassTurnOff","slots":{"name":"Front Door"},"confidence":0.99}',
        _intent("", "HassTurnOff", {"name": "Front Door"}, 0.99, confirm=True),
    ),
    (
        '{"intent":"HassTurnOn","slots":{"entity":"garage  door"},"confidence":0.7}',
        _intent("", "HassTurnOn", {"name": "Garage Door"}, 0.7, confirm=True),
    ),
    (
        '{"intent":"HassTurnOff","slots":{"area":"Office","domain":"lock"},"confidence":0.9}',
        _intent("", "HassTurnOff", {"area": "Office", "domain": "lock"}, 0.9, confirm=True),
    ),
    (
        '{"intent":"HassTurnOff","slots":{"area":"Office"},"confidence":0.9}',
        _intent("", "HassTurnOff", {"area": "Office"}, 0.9, confirm=True),
    ),
    (
        '{"intent":"HassTurnOff","slots":{"area":"Office","domain":"light"},"confidence":0.9}',
        _intent("", "HassTurnOff", {"area": "Office", "domain": "light"}, 0.9),
    ),
    (
        '{"intent":"answer","slots":{"name":"nowhere"},"confidence":0.8}',
        _intent("", "answer", {}, 0.8),
    ),
    ('{"intent":"HassTurnOn","slots":{"name":"Kitchen Light"},"confidence":0.59}', None),
    ('{"intent":"HassTurnOn","slots":{"name":"Kitchen Light"},"confidence":-0.5}', None),
    ('{"intent":"HassTurnOn","slots":{"name":"Kitchen Light"},"confidence":true}', None),
    ('{"intent":"HassTurnOn","slots":{"name":"Kitchen Light"},"confidence":NaN}', None),
    ('{"intent":"none","slots":{},"confidence":0.9}', None),
    ('{"intent":"HassTurnOn","slots":["Kitchen Light"],"confidence":0.9}', None),
    ('{"intent":"HassTurnOn","slots":{"name":"Kitchen Lite"},"confidence":0.9}', None),
    # the first object wins, even inside an array (here it has no confidence)
    ('[{"intent":"HassTurnOn"}] {"intent":"HassGetState","confidence":0.8}', None),
    (
        '{"note": "a } in a string", "intent":"HassGetState","confidence":0.8} {"intent":"x"}',
        _intent("", "HassGetState", {}, 0.8),
    ),
    (
        '{"intent": "HassTurnOn", {"intent":"HassGetState","confidence":0.8}',
        _intent("", "HassGetState", {}, 0.8),
    ),
]


@pytest.mark.parametrize(("raw", "expected"), HOME_ROWS)
def test_home_rows(raw, expected):
    result = parse_intent(raw, **HOME)
    if expected is None:
        assert result is None
    else:
        assert result == LlmIntent(
            expected.intent, expected.slots, expected.confidence, expected.needs_confirmation, raw
        )


@pytest.mark.parametrize(
    "raw", ["", "   ", "```json\n```", "{not json}", '{"intent": "HassTurnOn"', "[1, 2, 3]"]
)
def test_no_json_object_raises_invalid_output(raw):
    with pytest.raises(InvalidOutputError):
        parse_intent(raw, **HOME)


def test_iter_json_objects_yields_every_object_in_order():
    text = 'a {"a": 1} b {"b": {"c": "}"}} {bad} {"d": 2}'
    assert list(iter_json_objects(text)) == [{"a": 1}, {"b": {"c": "}"}}, {"d": 2}]


@pytest.mark.parametrize(
    "raw",
    [
        '{"intent":"HassTurnOn","Intent":"HassTurnOff","confidence":0.9}',
        '{"intent":"HassTurnOn","slots":{"name":"Kitchen Light","entity":"Front Door"},'
        '"confidence":1}',
    ],
)
def test_keys_that_fold_to_one_are_ambiguous(raw):
    vocab = Vocabulary(HOME["allowed_intents"], HOME["entity_names"], HOME["area_names"])
    assert check_output(raw, vocab, 0.6).reason == "ambiguous"
