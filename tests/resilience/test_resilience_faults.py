"""Fault injection: ``--inject NODE=FAULT`` parsing and what each fault does."""

import threading

import pytest

from hub.errors import ConfigError, FatalError, TimeoutError_, TransientError
from hub.resilience import GARBAGE, Fault, WorkerSlots, apply_fault, call_with_timeout, parse_faults

NODES = ["asr", "rules", "llm_intent", "act", "respond", "tts"]


@pytest.mark.parametrize(
    ("spec", "fault"),
    [
        ("asr=hang", Fault("asr", "hang")),
        ("llm_intent=slow:1500", Fault("llm_intent", "slow", 1500)),
        ("tts=error", Fault("tts", "error")),
        ("llm_intent=garbage", Fault("llm_intent", "garbage")),
        ("act=crash", Fault("act", "crash")),
        (" rules = hang ", Fault("rules", "hang")),
    ],
)
def test_parse_good_specs(spec, fault):
    assert parse_faults([spec], NODES) == {fault.node: fault}


def test_parse_several_specs():
    assert parse_faults(["asr=hang", "tts=slow:10"], NODES) == {
        "asr": Fault("asr", "hang"),
        "tts": Fault("tts", "slow", 10),
    }
    assert parse_faults([], NODES) == {}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "asr",
            "--inject 'asr': expected NODE=FAULT, FAULT one of hang, slow:MS, error, "
            "garbage, crash",
        ),
        ("=hang", "--inject '=hang': expected NODE=FAULT"),
        ("asr=", "--inject 'asr=': expected NODE=FAULT"),
        (
            "wake=hang",
            "--inject 'wake=hang': unknown node 'wake'; nodes: act, asr, llm_intent, "
            "respond, rules, tts",
        ),
        ("asr=explode", "--inject 'asr=explode': unknown fault 'explode'"),
        ("asr=slow", "--inject 'asr=slow': slow needs milliseconds"),
        ("asr=slow:", "--inject 'asr=slow:': slow needs milliseconds"),
        ("asr=slow:abc", "--inject 'asr=slow:abc': slow needs milliseconds"),
        ("asr=slow:0", "--inject 'asr=slow:0': slow needs milliseconds"),
        ("asr=slow:-5", "--inject 'asr=slow:-5': slow needs milliseconds"),
        ("asr=slow:1.5", "--inject 'asr=slow:1.5': slow needs milliseconds"),
        ("asr=slow:600001", "--inject 'asr=slow:600001': slow needs milliseconds"),
        ("asr=hang:5", "--inject 'asr=hang:5': fault 'hang' takes no argument"),
    ],
)
def test_parse_bad_specs_give_one_line(spec, message):
    with pytest.raises(ConfigError) as info:
        parse_faults([spec], NODES)
    assert info.value.message.startswith(message)
    assert "\n" not in info.value.message


def test_parse_refuses_two_faults_for_one_node():
    with pytest.raises(ConfigError, match="node 'asr' already has a fault"):
        parse_faults(["asr=hang", "asr=error"], NODES)


def test_no_fault_does_nothing():
    assert apply_fault(None, threading.Event()) is None


def test_garbage_is_returned_for_the_node_to_use():
    assert apply_fault(Fault("llm_intent", "garbage"), threading.Event()) == GARBAGE == "garbage"


def test_slow_returns_after_its_delay_when_not_cancelled():
    assert apply_fault(Fault("tts", "slow", 5), threading.Event()) is None


def test_slow_stops_early_when_cancelled():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(TimeoutError_, match="injected slow:600000, cancelled"):
        apply_fault(Fault("tts", "slow", 600_000), cancel)


def node_work(fault):
    def work(cancel):
        return apply_fault(fault, cancel) or "real output"

    return work


def test_injected_hang_times_out_and_its_worker_ends():
    slots = WorkerSlots(1)
    with pytest.raises(TimeoutError_, match="llm_intent: timed out"):
        call_with_timeout(
            node_work(Fault("llm_intent", "hang")), 0.02, node="llm_intent", slots=slots
        )
    for thread in [t for t in threading.enumerate() if t.name == "hub-llm_intent"]:
        thread.join(5.0)
    assert slots.busy == 0


@pytest.mark.parametrize(
    ("kind", "error", "message"),
    [
        ("error", TransientError, "asr: injected error"),
        ("crash", FatalError, "asr: RuntimeError: asr: injected crash"),
    ],
)
def test_injected_errors_are_classified(kind, error, message):
    with pytest.raises(error) as info:
        call_with_timeout(node_work(Fault("asr", kind)), 5.0, node="asr", slots=WorkerSlots(1))
    assert type(info.value) is error
    assert info.value.message == message


def test_slow_inside_a_node_still_returns_the_real_output():
    work = node_work(Fault("tts", "slow", 5))
    assert call_with_timeout(work, 5.0, node="tts", slots=WorkerSlots(1)) == "real output"
