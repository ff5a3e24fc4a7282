"""Case BC-36: a generation that never returns, two rooms asking the one model at once, and a
long follow-up conversation, with the real llama.cpp adapter (:class:`hub.llm.llama.
LlamaEngine` over the bundled SmolLM2) whose ``Llama.create_completion`` is replaced by stubs:

(a) a generator that yields one token per second and never stops: the turn's deadline stops
    it (the adapter's stopping criterion is checked every token), the user hears the fallback
    line, the ``llm`` breaker counts a timeout, the trace has ``{node: "llm_answer", kind:
    "timeout"}`` (the case writes ``llm``; the hub's LLM nodes are ``llm_intent`` and
    ``llm_answer``). With this stub's 1 s per token the abandoned call stops at its next token,
    not within the case's 200 ms: a real llama.cpp token takes about 12 ms here;
(d) the next request right after works (no lock held, the context restored);
(b) a stub that raises when it is entered a second time before its first call returns, called
    from two conversations (satellites) 50 ms apart: the second waits or gets the busy
    fallback within its own deadline; the re-entry guard never fires;
(c) 30 follow-up turns of about 120 tokens each: prompt tokens plus ``max_tokens`` always fit
    ``n_ctx`` (the stub raises llama-cpp-python's ``ValueError`` when they would not), and the
    prompt does not grow from turn to turn (the adapter keeps no history to overflow, so
    there is nothing to trim and no trim to log).
"""

from __future__ import annotations

import threading
import time

import pytest

from hub.intents.faq import PLACEHOLDER_TEXT
from hub.llm import llama, make_llm, prompts
from hub.llm.prompts import DEFAULT_INTENTS
from hub.settings import LlmSettings, load_settings

from fakes import ROOMY_TIMEOUTS, FakeTts, make_hub, wait_for

HOME = load_settings(None).home
TOKEN_S = 1.0
"""The endless stub's time per token (the case's "one token per second")."""
QUESTION = "why is the sky blue"
CASE_N_CTX = 2048
"""The context window of the case's 30-turn conversation (the hub's own is larger)."""


class Completion:
    """``Llama.create_completion`` stub: yields ``pieces`` one token at a time (forever when
    ``endless``), checking the caller's stopping criteria before each token as llama.cpp
    does, and raising if it is entered again while a call is running (the re-entry guard).

    ``n_ctx``: raises ``ValueError("Requested tokens (N) exceed context window of n_ctx")``,
    as llama-cpp-python does, when the prompt and ``max_tokens`` do not fit.
    """

    def __init__(self, n_ctx: int, pieces=(" Light", " scatters."), endless=False, token_s=0.0):
        self.n_ctx, self.pieces, self.endless, self.token_s = n_ctx, pieces, endless, token_s
        self.inside = 0
        self.reentered = False
        self.stopped_by_caller = 0
        self.calls = 0
        self.prompt_lengths: list[int] = []
        self.ended = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, tokens, stream=True, stopping_criteria=None, max_tokens=16, **kw):
        requested = len(tokens) + (max_tokens or 0)
        if requested > self.n_ctx:
            raise ValueError(
                f"Requested tokens ({requested}) exceed context window of {self.n_ctx}"
            )
        self.prompt_lengths.append(len(tokens))
        return self._tokens(stopping_criteria)

    def _tokens(self, stopping_criteria):
        with self._lock:
            if self.inside:
                self.reentered = True
                raise RuntimeError("re-entered while a generation runs")
            self.inside += 1
            self.calls += 1
        self.ended.clear()
        try:
            i = 0
            while self.endless or i < len(self.pieces):
                time.sleep(self.token_s)  # the model computing the next token
                if stopping_criteria is not None and any(c([], None) for c in stopping_criteria):
                    self.stopped_by_caller += 1
                    return
                piece = self.pieces[i % len(self.pieces)] if self.pieces else " and"
                yield {"choices": [{"text": piece, "finish_reason": None}]}
                i += 1
            yield {"choices": [{"text": "", "finish_reason": "stop"}]}
        finally:
            with self._lock:
                self.inside -= 1
            self.ended.set()


@pytest.fixture(scope="module")
def engine():
    """The real adapter over the bundled model, always resident (a stub stays in place)."""
    settings = LlmSettings(keep_loaded_s=-1, max_tokens=256, answer_min_logprob=-100)
    eng = make_llm(settings, HOME, DEFAULT_INTENTS)  # the stubs' logits are not theirs: no gate
    yield eng
    eng.close()


def stubbed(engine, monkeypatch, completion: Completion) -> Completion:
    monkeypatch.setattr(engine._res.obj, "create_completion", completion)
    return completion


def test_bc_36_a_endless_generation_stops_at_the_deadline_and_d_the_next_request_works(
    engine, monkeypatch
):
    stuck = stubbed(
        engine,
        monkeypatch,
        Completion(engine._res.obj.n_ctx(), pieces=(" and",), endless=True, token_s=TOKEN_S),
    )
    hub = make_hub(text=QUESTION, llm=engine, tts=FakeTts(), timeouts_s=ROOMY_TIMEOUTS)
    breaker = hub.breakers.get("llm")
    counted: list[str] = []
    record = breaker.record_failure
    monkeypatch.setattr(
        breaker, "record_failure", lambda kind: (counted.append(kind), record(kind))
    )

    trace = hub.turn_text(QUESTION)
    assert trace["response"] == PLACEHOLDER_TEXT and trace["fallback_level"] == 4  # heard
    assert {"node": "llm_answer", "kind": "timeout"} in [
        {"node": e["node"], "kind": e["kind"]} for e in trace["errors"]
    ]
    assert "timeout" in counted  # the breaker counted it
    assert stuck.ended.wait(10 * TOKEN_S)  # the abandoned call stopped ...
    assert stuck.stopped_by_caller == stuck.calls  # ... at a token, told by the hub's criterion
    assert not stuck.reentered

    # (d) the next request, right after: the lock is free and the context is usable
    stubbed(engine, monkeypatch, Completion(engine._res.obj.n_ctx()))
    trace = hub.turn_text(QUESTION)
    assert trace["source"] == "llm" and trace["errors"] == []
    assert trace["response"] == "Light scatters."


def test_bc_36_b_two_rooms_at_once_never_reenter_the_model(engine, monkeypatch):
    slow = stubbed(
        engine,
        monkeypatch,
        Completion(
            engine._res.obj.n_ctx(), pieces=(" Light", " scatters", " a", " lot."), token_s=0.2
        ),
    )
    hub = make_hub(text=QUESTION, llm=engine, tts=FakeTts(), timeouts_s=ROOMY_TIMEOUTS)
    rooms = [hub.conversation("satellite:kitchen"), hub.conversation("satellite:office")]
    traces: dict[int, dict] = {}

    def ask(i: int) -> None:
        traces[i] = hub.turn_text(QUESTION, conversation=rooms[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    threads[0].start()
    assert wait_for(lambda: slow.inside or slow.calls)  # the first one holds the model
    time.sleep(0.05)  # the second room asks 50 ms later (the case's input, not a timing check)
    threads[1].start()
    for t in threads:
        t.join(60)
    assert not slow.reentered
    assert traces[0]["response"] == "Light scatters a lot."
    # the second waited for the model, or got the fallback line; within its own turn
    assert traces[1]["response"] in ("Light scatters a lot.", PLACEHOLDER_TEXT), traces[1]


def test_bc_36_c_thirty_long_follow_ups_always_fit_the_context(engine, monkeypatch):
    """The case's window: ``n_ctx`` 2048 (the stub refuses more), ``max_tokens`` 256; the
    classify prompt (greedy decoding, not ``create_completion``) is measured with the model's
    own tokenizer against the same window."""
    n_ctx = CASE_N_CTX
    fits = stubbed(engine, monkeypatch, Completion(n_ctx))
    names = ["the Office Light", "the Bed Light", "the Kitchen Light", "the Standing Light"]
    classify = []
    for turn in range(30):
        text = "and what about " + " and ".join(names * 6) + f" on turn {turn}"  # ≈ 120 tokens
        sentences = list(engine.answer(text))
        assert sentences == ["Light scatters."], turn  # turn 30 still answered, no ValueError
        with engine._res.use(5.0):
            messages = prompts.classify_messages(
                text[: llama.MAX_INPUT_CHARS], DEFAULT_INTENTS, HOME
            )
            classify.append(len(engine._tokens(messages)))
    assert len(fits.prompt_lengths) == 30 and not fits.reentered
    assert max(fits.prompt_lengths) + engine._settings.max_tokens <= n_ctx
    assert max(classify) + llama.CLASSIFY_MAX_TOKENS <= n_ctx
    for lengths in (fits.prompt_lengths, classify):  # no history piles up from turn to turn
        assert max(lengths) - min(lengths) <= 4
