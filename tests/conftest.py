"""Markers of the existing test modules: ``models``, ``live`` and ``slow`` (pyproject.toml), and
the few tests that keep a part in the fast tier (``scripts/test.sh --fast``).

``models``: the test loads a real model (Piper, also through ``live_audio.synth``;
PocketSphinx; Vosk; the LLM; Whisper). ``live``: it starts a server or a process (PulseAudio,
``hub run`` or another ``hub`` command, mosquitto, a Wyoming server, Home Assistant).
The tables below mark the modules written before the markers (by module basename, or
``module::test`` for one test); new tests mark themselves with ``@pytest.mark.models`` /
``@pytest.mark.live``. Every test using a fixture in :data:`LIVE_FIXTURES` is ``live``.

``fast``: selected by ``--fast`` although ``live`` or ``models``: quick tests of the parts whose
every test is one of those (measured with ``--durations=0``, BENCHMARKS.md "Test suite").
"""

from __future__ import annotations

import pytest

LIVE_FIXTURES = {"broker", "test_audio_server"}
"""Fixtures that start mosquitto or PulseAudio for the tests using them."""

LIVE = {
    # mosquitto
    "test_mqtt_cli",
    "test_mqtt_drop",
    "test_timers_delayed",
    "test_mqtt_cases::test_bc29_refused_login_is_one_error_and_no_retry_loop",
    "test_mqtt_cases::test_tls_with_username_and_password",
    "test_graph::test_actions_are_published_to_mqtt_once",
    "test_confirm::test_real_mosquitto_counts_one_publish_on_yes_none_on_no",
    # PulseAudio and `hub run`
    "test_daemon_duplex",
    "test_daemon_lazy_llm",
    "test_daemon_run",
    "test_config::test_example_then_doctor_passes",
    # Wyoming servers (in process and `hub wyoming`) and their clients
    "test_wyoming",
    "test_wyoming_cli",
    "test_wyoming_clients",
    # `hub ...` as a process
    "test_cli",
    "test_cli_interrupt",
    "test_newuser",
    "test_llm_exit",
    "test_timers::test_ask_prints_timer_finished_with_its_audio_within_the_exit_grace",
    "test_timers::test_exit_while_restored_timers_alerts_are_rendered_is_clean",
    "test_intents_fuzzy::test_several_commands_through_hub_ask",
    "test_mqtt::test_cli_config_error_is_one_line_exit_2",
    "test_mqtt::test_config_check_refuses_wildcard_topic_parts_in_one_line_exit_2",
    "test_store::test_eight_processes_opening_a_new_file_all_get_a_store",
    "test_models::test_unreachable_host_is_one_line_and_exit_3",
    # systemd-analyze and the install script
    "test_systemd",
}

MODELS = {
    # Piper (directly or through live_audio.synth)
    "test_tts",
    "test_playback",
    "test_trace_spoken",
    "test_asr_confidence",
    "test_asr_grammar",
    "test_daemon_duplex",
    "test_daemon_run",
    "test_daemon_lazy_llm",
    "test_wyoming",
    "test_wyoming_clients",
    "test_supervisor::test_bc26_echo_of_the_answer_is_recognized_as_echo",
    "test_supervisor::test_bc26_the_user_speaking_while_the_hub_answers_is_not_echo",
    "test_supervisor::test_bc26_echo_is_recognized_when_the_speaker_and_the_listener_run_late"
    "_under_load",
    "test_supervisor::test_nothing_played_means_no_echo_and_the_tail_guard_ends",
    "test_wake::test_model_file_path_loads_like_the_builtin",
    # PocketSphinx and Vosk
    "test_asr",
    "test_confirm::test_synthesized_voice_is_asked_back_and_sends_nothing",
    # PocketSphinx and Vosk
    "test_audio_convert::test_bc02_stereo_and_left_only_give_the_reference_transcript",
    # the LLM
    "test_llm_llama",
    "test_llm_resident",
    "test_llm_exit",
    "test_newuser",
    "test_llm_unsure::test_the_real_model_s_sureness_decides_what_is_said",
}

SLOW = {
    "test_asr_fsg::test_merged_grammar_is_smaller_and_scores_every_pattern_sentence_the_same",
    "test_listen::test_real_vad_keeps_the_whole_command_and_ends_soon_after",
}
"""Tests without a model or a server that take more than ~15 s alone (the unmerged grammar of
every pattern; the VAD on every recording): ``slow``, left out of the fast tier."""

SLOW_FIXTURES = {"tree_grammars"}
"""Fixtures that make every test using them ``slow`` (the unmerged grammar: ~3 min at load 10)."""

MODEL_FIXTURES = {"test_wake": {"detectors"}, "test_listen": {"wake"}}
"""Per module, the fixtures that synthesize speech with Piper."""

FAST = {"test_cli::test_replay_missing_path_is_bad_input"}
"""``module::test`` of the live or models tests kept in the fast tier (cli/: every test runs
``hub`` as a process)."""


def _keys(item: pytest.Item) -> tuple[str, str]:
    module = item.path.stem
    return module, f"{module}::{getattr(item, 'originalname', item.name)}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add ``live``, ``models`` and ``fast`` from the tables (before ``-m`` selects)."""
    for item in items:
        module, test = _keys(item)
        if module in LIVE or test in LIVE or LIVE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.live)
        if (
            module in MODELS
            or test in MODELS
            or MODEL_FIXTURES.get(module, set()) & set(item.fixturenames)
        ):
            item.add_marker(pytest.mark.models)
        if test in SLOW or SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
        if test in FAST:
            item.add_marker(pytest.mark.fast)
