"""llama.cpp adapter (``llama-cpp-python``): one model, resident while used, two short prompts.

- Classify: the home's few-shot prompt (:mod:`hub.llm.prompts`) with output constrained by a
  GBNF grammar made from the JSON schema (llama.cpp ``json_schema_to_gbnf``), greedy sampling.
  ``confidence`` in the returned JSON is the model's probability of the intent it chose
  (among the allowed intents), not its self-reported number.
- Answer: a short system prompt with the home's facts; text streamed sentence by sentence.
- Prompt prefix caching: the KV state after each system prefix (everything before the user's
  text) is evaluated once, at start (classify, the strict retry prompt and answer: each
  takes seconds to evaluate, which a turn's deadline does not have; the uncancellable
  evaluation of the strict one inside a timed-out retry held the model for tens of seconds
  on a busy machine), and saved; a call whose prefix is not the one in the
  context restores it (``llama_state_set_data``), then ``Llama.generate`` reuses the longest
  common token prefix and evaluates only the user's text.
- Residency (``[llm] keep_loaded_s``, :mod:`hub.llm.resident`): the model is freed that many
  seconds after its last call and loaded again (0.3-0.4 s on 2 busy cores) by the next one,
  whose prefix state is then read from the disk cache; long-lived commands (``hub run``,
  ``hub wyoming``) build the cache at start and release the model right away
  (:func:`make_llama_engine` ``release``); a voice turn prefetches it (:meth:`prefetch`).
- Cancel: a stopping criterion checks the cancel event after every token (≈ 10 ms at
  135M), and breaking out of the stream ends generation.
- Exit: a generation abandoned by a timed-out node may still be running in its worker thread
  when the process ends; llama.cpp's compute threads then abort the process ("terminate
  called without an active exception", exit 134). :meth:`LlamaEngine.close` (registered with
  :mod:`atexit`) stops every generation at its next token and waits for it to end first.
- Token limit: a generation cut by ``max_tokens`` (``finish_reason == "length"``) is never
  acted on: classify raises InvalidOutputError, and an answer drops its unfinished sentence.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import logging
import threading
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from hub.errors import (BadInputError, FatalError, InvalidOutputError, TimeoutError_,
                        TransientError)
from hub.llm import prompts
from hub.llm.model import embedded_model_path, load_llama
from hub.llm.resident import Resident
from hub.llm.prefix_cache import prefix_cache_path, read_state, write_state
from hub.llm.sentences import stream_sentences, withhold_unsure
from hub.settings import HomeSettings, LlmSettings

log = logging.getLogger(__name__)

CLASSIFY_MAX_TOKENS = 80
"""Longest classify output; the JSON of one intent is ≈ 30 tokens."""
LOCK_WAIT_S = 1.0
"""How long a call waits for the model while another generation holds it."""
CLOSE_WAIT_S = 10.0
"""At exit, how long :meth:`LlamaEngine.close` waits for a running generation to stop."""
PREFIX_KINDS = ("classify", "strict", "answer")
"""The prompts whose prefix state is built at start and cached on disk."""
MAX_INPUT_CHARS = 400
"""Longer user text is cut to this (keeps the prompt inside the context window)."""
_CHATML = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
           "{% endfor %}<|im_start|>assistant\n")


@dataclass(frozen=True)
class _Prefix:
    """A saved KV state: the prefix tokens and llama.cpp's state bytes after them."""

    tokens: tuple[int, ...]
    state: bytes


class LlamaEngine:
    """:class:`hub.llm.LlmEngine` over a ``llama_cpp.Llama`` (see module docstring).

    ``llm`` is the model loaded now (its chat template is read from it); ``load`` loads it
    again after it was released (None: it stays resident until :meth:`close`).
    """

    name = "llama.cpp"

    def __init__(self, llm, settings: LlmSettings, home: HomeSettings, intents: Collection[str],
                 load: Callable[[], object] | None = None):
        from llama_cpp import LlamaGrammar
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._settings, self._home = settings, home
        self._intents = tuple(intents)
        self._res = Resident(load or (lambda: llm), self._free,
                             settings.keep_loaded_s if load is not None else -1.0, obj=llm)
        self._closing = self._res.closing
        schema = prompts.intent_schema(self._intents, prompts.home_names(home))
        self._grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        template = llm.metadata.get("tokenizer.chat_template") or _CHATML
        self._format = Jinja2ChatFormatter(template, eos_token="", bos_token="")
        self._builders = {
            "classify": lambda t: prompts.classify_messages(t, self._intents, home),
            "strict": lambda t: prompts.classify_messages(t, self._intents, home, strict=True),
            "answer": lambda t: prompts.answer_messages(t, home),
        }
        self._prefixes: dict[str, _Prefix] = {}

    @property
    def _llm(self):
        """The loaded ``Llama`` (None while released); use it only inside ``self._res.use``."""
        return self._res.obj

    @property
    def loaded(self) -> bool:
        """True while the model is in memory (see ``[llm] keep_loaded_s``)."""
        return self._res.loaded

    def _free(self, llm) -> None:
        """Free ``llm`` and the prefix states read for it (under the resident lock)."""
        self._prefixes.clear()
        close = getattr(llm, "close", None)
        if close is not None:
            close()

    def prefetch(self) -> bool:
        """Load the model in the background if it was released (see ``Resident.prefetch``)."""
        return self._res.prefetch()

    def release(self) -> bool:
        """Free the model now unless it is always resident or in use; True when freed."""
        return self._res.release()

    def close(self, wait_s: float = CLOSE_WAIT_S) -> bool:
        """Stop every generation at its next token, wait for it to end, and free the model.

        Safe to call twice and from :mod:`atexit`. Returns False when a generation was still
        running after ``wait_s`` seconds (the model is then left loaded).
        """
        return self._res.close(wait_s)

    def _stopped(self, cancel: threading.Event | None) -> bool:
        """True when this call was cancelled or the engine is closing."""
        return self._closing.is_set() or bool(cancel is not None and cancel.is_set())

    def warm(self, kinds: Collection[str] = PREFIX_KINDS) -> None:
        """Evaluate and save the prompt prefixes now (on disk too) rather than on first use.

        Raises:
            TransientError: closing, or busy for longer than ``CLOSE_WAIT_S``.
        """
        with self._res.use(CLOSE_WAIT_S):
            for kind in kinds:
                self._prefixes.setdefault(kind, self._save_prefix(self._builders[kind]))

    def cache_ready(self, kinds: Collection[str] = PREFIX_KINDS) -> bool:
        """True when the prompt cache of every kind is on disk (:func:`prefix_cache_path`),
        so the first turn restores it instead of evaluating the prompt (loads the model to
        tokenize the prompts if it was released)."""
        with self._res.use(CLOSE_WAIT_S):
            for kind in kinds:
                cached = prefix_cache_path(self._llm, self._prefix_tokens(self._builders[kind]))
                if cached is None or not cached.is_file():
                    return False
        return True

    def _prefix_tokens(self, build) -> tuple[int, ...]:
        """The tokens that every prompt made by ``build(text)`` shares."""
        a, b = self._tokens(build("a")), self._tokens(build("b"))
        return tuple(a[:next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)])

    def _tokens(self, messages: list[dict]) -> list[int]:
        """The prompt tokens of chat ``messages`` (the model's own chat template).

        Raises:
            TransientError: the engine is closed (the process is ending).
        """
        if self._llm is None:
            raise TransientError("llama.cpp is closed", node="llm")
        text = self._format(messages=messages).prompt
        return self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)

    def _save_prefix(self, build) -> _Prefix:
        """Evaluate the tokens that every prompt made by ``build(text)`` shares, and save them.

        The state is also kept on disk (:func:`prefix_cache_path`), so the next process with
        the same model and prompt loads it instead of evaluating the prompt again.
        """
        tokens = self._prefix_tokens(build)
        cached = prefix_cache_path(self._llm, tokens)
        state = read_state(cached)
        if state is not None:
            return _Prefix(tokens, state)
        llm = self._llm
        llm.reset()
        llm.eval(list(tokens))
        size = _llama_cpp().llama_state_get_size(llm.ctx)
        buf = (ctypes.c_uint8 * size)()
        used = _llama_cpp().llama_state_get_data(llm.ctx, buf, size)
        prefix = _Prefix(tokens, bytes(buf)[:used])
        if cached is not None:
            write_state(cached, prefix.state)
        return prefix

    def _restore(self, kind: str) -> None:
        """Put the saved prefix state of ``kind`` into the context unless it is already there."""
        if kind not in self._prefixes:
            self._prefixes[kind] = self._save_prefix(self._builders[kind])
        prefix, llm = self._prefixes[kind], self._llm
        if tuple(llm.input_ids[: min(llm.n_tokens, len(prefix.tokens))]) == prefix.tokens:
            return
        buf = (ctypes.c_uint8 * len(prefix.state)).from_buffer_copy(prefix.state)
        if _llama_cpp().llama_state_set_data(llm.ctx, buf, len(prefix.state)) != len(prefix.state):
            llm.reset()
            return
        llm.input_ids[: len(prefix.tokens)] = prefix.tokens
        llm.n_tokens = len(prefix.tokens)
        llm._requires_eval = True  # logits of a restored state are stale (llama.py contract)

    def _stream(self, messages: list[dict], kind: str, cancel: threading.Event | None,
                finish: dict | None = None, **kwargs) -> Iterator[str]:
        """Text pieces of one generation of chat ``messages``; holds the model (loading it if
        it was released) until the stream ends or is closed."""
        with self._res.use(LOCK_WAIT_S):
            yield from self._generate(self._tokens(messages), kind, cancel, finish, **kwargs)

    def _generate(self, tokens: list[int], kind: str, cancel: threading.Event | None,
                  finish: dict | None = None, sureness: list[float] | None = None,
                  **kwargs) -> Iterator[str]:
        """Text pieces of one generation (the caller holds ``self._res.use``).

        ``finish["reason"]`` is set to llama.cpp's ``finish_reason`` (``"stop"``,
        ``"length"``) when the generation ends. ``sureness`` gets, for each generated token,
        the log-probability of the most likely token at its position (:meth:`_top_logprob`).
        """
        from llama_cpp import StoppingCriteriaList

        chunks = None
        try:
            self._restore(kind)
            def stop_here(_ids, _logits) -> bool:
                if sureness is not None:
                    sureness.append(self._top_logprob())
                return self._stopped(cancel)

            stop = StoppingCriteriaList([stop_here])
            chunks = self._llm.create_completion(tokens, stream=True, stopping_criteria=stop,
                                                 **kwargs)
            for chunk in chunks:
                choice = chunk["choices"][0]
                if finish is not None and choice.get("finish_reason"):
                    finish["reason"] = choice["finish_reason"]
                yield choice["text"]
        except ValueError as exc:
            raise BadInputError(f"llama.cpp rejected the prompt: {exc}", node="llm") from None
        except RuntimeError as exc:
            self._llm.reset()
            raise TransientError(f"llama.cpp failed: {exc}", node="llm") from None
        finally:
            if chunks is not None:
                chunks.close()

    def classify(self, text: str, cancel: threading.Event | None = None,
                 strict: bool = False) -> str:
        """Raw JSON text for ``text`` (grammar-constrained); see :class:`hub.llm.LlmEngine`.

        Raises:
            TimeoutError_: ``cancel`` was set before the output was complete.
            TransientError, BadInputError: llama.cpp failed, or rejected the prompt.
        """
        messages = prompts.classify_messages(text[:MAX_INPUT_CHARS], self._intents, self._home,
                                             strict)
        with self._res.use(LOCK_WAIT_S):  # one hold: the confidence needs the same context
            tokens, finish = self._tokens(messages), {}
            raw = "".join(self._generate(tokens, "strict" if strict else "classify", cancel,
                                         finish, max_tokens=CLASSIFY_MAX_TOKENS,
                                         temperature=0.0, grammar=self._grammar))
            if self._stopped(cancel):
                raise TimeoutError_("llm classify cancelled", node="llm_intent")
            if finish.get("reason") == "length":
                raise InvalidOutputError("llm classify output cut by the token limit",
                                         node="llm_intent")
            return self._with_confidence(raw, tokens)

    def _with_confidence(self, raw: str, prompt: list[int]) -> str:
        """``raw`` with ``confidence`` replaced by the model's probability of its intent.

        The model's self-reported number is a copy of the few-shot examples' (always 0.9), so
        it is replaced by P(intent | prompt) among the allowed intents (product over the
        intent's tokens of the softmax restricted to the tokens the candidates allow there).
        Output that is not a JSON object with a string intent is returned unchanged.
        """
        try:
            obj = json.loads(raw)
            intent = obj["intent"]
        except (ValueError, KeyError, TypeError):
            return raw
        if not isinstance(intent, str):
            return raw
        obj["confidence"] = round(self._intent_probability(prompt, intent), 3)
        return json.dumps(obj)

    def _intent_probability(self, prompt: list[int], intent: str) -> float:
        """P(``intent`` | ``prompt``) over the allowed intents, from the model's logits."""
        import numpy as np

        llm, low = self._llm, _llama_cpp()
        seqs = {c: self._llm.tokenize(f'{{"intent": "{c}"'.encode(), add_bos=False, special=False)
                for c in (*self._intents, prompts.ANSWER, prompts.NONE)}
        if intent not in seqs:
            return 0.0
        chosen, alive, prob = seqs[intent], list(seqs.values()), 1.0
        llm.n_tokens = min(llm.n_tokens, len(prompt) - 1)  # the context holds the prompt
        llm.eval(prompt[llm.n_tokens:])  # re-evaluated from its last token: fresh logits
        for pos, token in enumerate(chosen):
            allowed = {seq[pos] for seq in alive if len(seq) > pos}
            if len(allowed) > 1:
                logits = np.ctypeslib.as_array(low.llama_get_logits(llm.ctx),
                                               shape=(llm.n_vocab(),))
                picked = logits[sorted(allowed)]
                weights = np.exp(picked - picked.max())
                prob *= float(weights[sorted(allowed).index(token)] / weights.sum())
            alive = [seq for seq in alive if len(seq) > pos and seq[pos] == token]
            if len(alive) == 1:
                break
            llm.eval([token])
        return prob

    def _top_logprob(self) -> float:
        """log P of the most likely next token, from the logits llama.cpp computed last
        (the distribution the token just sampled was drawn from): max(logits) − logsumexp."""
        import numpy as np

        logits = np.ctypeslib.as_array(_llama_cpp().llama_get_logits(self._llm.ctx),
                                       shape=(self._llm.n_vocab(),))
        top = float(logits.max())
        return -float(np.log(np.exp(logits - top).sum()))

    def answer(self, question: str, cancel: threading.Event | None = None) -> Iterator[str]:
        """At most two sentences answering ``question``, each yielded as soon as it is complete.

        Generation stops at the second sentence, at ``max_tokens``, or when ``cancel`` is set.
        A sentence the model was unsure of (``[llm] answer_min_logprob``) is not said:
        :func:`hub.llm.sentences.withhold_unsure`.
        """
        messages = prompts.answer_messages(question[:MAX_INPUT_CHARS], self._home)
        finish: dict = {}
        sureness: list[float] = []
        pieces = self._stream(messages, "answer", cancel, finish, sureness=sureness,
                              max_tokens=self._settings.max_tokens, temperature=0.0,
                              repeat_penalty=1.1)
        sentences = stream_sentences(pieces, prompts.ANSWER_SENTENCES, cancel,
                                     keep_tail=lambda: finish.get("reason") != "length")
        return withhold_unsure(sentences, lambda: _mean(sureness),
                               self._settings.answer_min_logprob)


def _mean(values: list[float]) -> float:
    """The mean of ``values``; 0.0 (sure) when there are none yet."""
    return sum(values) / len(values) if values else 0.0


def _llama_cpp():
    """The low-level ``llama_cpp.llama_cpp`` bindings (imported lazily)."""
    from llama_cpp import llama_cpp as low

    return low


def make_llama_engine(settings: LlmSettings, home: HomeSettings, intents: Collection[str],
                      warm: bool = True, release: bool = False) -> LlamaEngine:
    """Load the configured GGUF (or the embedded SmolLM2) and build the engine.

    With ``warm`` (the default) the prompt cache is built or loaded now; without, only the
    model is loaded (``hub doctor`` asks :meth:`LlamaEngine.cache_ready`). With ``release``
    (long-lived commands) the model is then freed unless ``[llm] keep_loaded_s`` is negative;
    the first call loads it again. Otherwise it is freed ``keep_loaded_s`` after warm-up or
    its last call.

    Raises:
        FatalError: the model is missing or cannot be loaded; the message names the path.
    """
    path = Path(settings.model).expanduser() if settings.model else embedded_model_path()
    llm = load_llama(path, settings.threads)
    try:
        engine = LlamaEngine(llm, settings, home, intents,
                             load=lambda: load_llama(path, settings.threads))
        del llm
        if warm:
            engine.warm()
        if release:
            engine.release()
    except (ValueError, RuntimeError) as exc:
        raise FatalError(f"cannot prepare LLM model {path}: {exc}", node="llm",
                         file=str(path)) from None
    atexit.register(engine.close)  # before llama.cpp's own exit handlers run (LIFO)
    return engine
