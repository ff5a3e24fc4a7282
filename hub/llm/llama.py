"""llama.cpp adapter (``llama-cpp-python``): one model, resident while used, two short prompts.

- Classify: the few-shot prompt (:mod:`hub.llm.prompts`), greedy under the turn's grammar
  (:mod:`hub.llm.grammar`, :mod:`hub.llm.greedy`); ``confidence`` is the model's probability
  of the intent it chose (among the allowed intents), read from the logits.
- Answer: a short system prompt with the home's facts; text streamed sentence by sentence.
- Prompt prefix caching: the KV state after each system prefix (everything before the user's
  text) is evaluated once, at start (classify, the strict retry prompt and answer: each
  takes seconds, which a turn's deadline does not have), and saved; a call whose prefix is
  not the one in the context restores it (``llama_state_set_data``), then only the tokens
  after the longest common prefix are evaluated.
- Residency (``[llm] keep_loaded_s``, :mod:`hub.llm.resident`): the model is freed that many
  seconds after its last call and loaded again (0.3-0.4 s) by the next one, which reads its
  prefix state from disk; ``hub run``, ``hub wyoming`` and ``hub replay`` build the cache at
  start (a cache on disk: no weights loaded at all) and release the model
  (:func:`make_llama_engine` ``release``); a voice turn prefetches it (:meth:`prefetch`).
- Cancel and exit: the cancel event is checked after every token; at exit (llama.cpp's threads
  abort a process that ends during a generation, exit 134) :meth:`LlamaEngine.close`
  (:mod:`atexit`) stops every generation at its next token and waits for it to end.
- Token limit: output cut by ``max_tokens`` is never acted on (InvalidOutputError; an answer
  drops its unfinished sentence).
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

from hub.errors import BadInputError, FatalError, InvalidOutputError, TimeoutError_, TransientError
from hub.llm import prompts
from hub.llm.confidence import intent_probability, mean, top_logprob, with_confidence
from hub.llm.grammar import TurnGrammars
from hub.llm.greedy import generate_json
from hub.llm.model import (
    chat_template,
    check_fits,
    embedded_model_path,
    load_llama,
    overflow_logged,
)
from hub.llm.prefix_cache import Prefix, prefix_cache_path, saved_prefix, set_context_state
from hub.llm.resident import Resident
from hub.llm.stream import stream_sentences, withhold_unsure
from hub.settings import HomeSettings, LlmSettings

log = logging.getLogger(__name__)

CHAT_STOPS = ("<|im_end|>", "<|im_start|>", "<|endoftext|>", "<end_of_turn>", "<start_of_turn>")
"""Stop sequences of every call: the end of the assistant's turn in ChatML (SmolLM2, Qwen) and
Gemma's turn markers, and the end of text, so a model that ignores its EOS token never writes
the next turn."""
ANSWER_STOPS = (*CHAT_STOPS, "\n\n", "\nUser:", "\nQuestion:")
"""Stop sequences of an answer: also a blank line or a made-up next question."""
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


class LlamaEngine:
    """:class:`hub.llm.LlmEngine` over a ``llama_cpp.Llama`` (see module docstring).

    ``llm`` is the model loaded now (its chat template is read from it); ``load`` loads it
    again after it was released (None: it stays resident until :meth:`close`). With
    ``loaded`` False, ``llm`` is a vocabulary-only ``Llama`` (tokenizer and metadata, no
    weights): the engine starts released and loads the model on first use.
    """

    name = "llama.cpp"

    def __init__(
        self,
        llm,
        settings: LlmSettings,
        home: HomeSettings,
        intents: Collection[str],
        load: Callable[[], object] | None = None,
        loaded: bool = True,
    ):
        # lazy: llama_cpp (the LLM runtime) loads only when the LLM is used
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._settings, self._home = settings, home
        self._intents = tuple(intents)
        self._res = Resident(
            load or (lambda: llm),
            self._free,
            settings.keep_loaded_s if load is not None else -1.0,
            obj=llm if loaded else None,
        )
        self._vocab = None if loaded else llm
        self._closing = self._res.closing
        self._grammars = TurnGrammars(self._intents, home)
        template = chat_template(llm)
        self._format = Jinja2ChatFormatter(template, eos_token="", bos_token="")
        self._builders = {
            "classify": lambda t: prompts.classify_messages(t, self._intents, home),
            "strict": lambda t: prompts.classify_messages(t, self._intents, home, strict=True),
            "answer": lambda t: prompts.answer_messages(t, home, prompts.PREFIX_TIMES[t == "b"]),
        }
        self._prefixes: dict[str, Prefix] = {}

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
                with overflow_logged(kind):  # each call then says so: never "unavailable"
                    tokens = self._prefix_tokens(self._builders[kind])
                    self._prefixes.setdefault(kind, saved_prefix(self._llm, tokens))

    def cache_ready(self, kinds: Collection[str] = PREFIX_KINDS) -> bool:
        """True when the prompt cache of every kind is on disk (:func:`prefix_cache_path`),
        so the first turn restores it instead of evaluating the prompt (loads the model to
        tokenize the prompts if it was released and there is no vocabulary-only one)."""
        if self._vocab is not None and not self.loaded:
            return self._cached(kinds)
        with self._res.use(CLOSE_WAIT_S):
            return self._cached(kinds)

    def _cached(self, kinds: Collection[str]) -> bool:
        """True when the prefix state of every kind is on disk (tokenized by the model or
        the vocabulary-only ``Llama``)."""
        for kind in kinds:
            tokens = self._prefix_tokens(self._builders[kind])
            cached = prefix_cache_path(self._llm or self._vocab, tokens)
            if cached is None or not cached.is_file():
                return False
        return True

    def _prefix_tokens(self, build) -> tuple[int, ...]:
        """The tokens that every prompt made by ``build(text)`` shares."""
        a, b = self._tokens(build("a")), self._tokens(build("b"))
        return tuple(a[: next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)])

    def _tokens(self, messages: list[dict]) -> list[int]:
        """The prompt tokens of chat ``messages`` (the model's own chat template).

        Raises:
            TransientError: the engine is closed (the process is ending).
        """
        llm = self._llm or self._vocab  # tokenizing needs no weights
        if llm is None or self._closing.is_set():
            raise TransientError("llama.cpp is closed", node="llm")
        text = self._format(messages=messages).prompt
        return llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)

    def _restore(self, kind: str) -> None:
        """Put the saved prefix state of ``kind`` into the context unless it is already there."""
        if kind not in self._prefixes:
            tokens = self._prefix_tokens(self._builders[kind])
            self._prefixes[kind] = saved_prefix(self._llm, tokens)
        prefix, llm = self._prefixes[kind], self._llm
        if tuple(llm.input_ids[: min(llm.n_tokens, len(prefix.tokens))]) == prefix.tokens:
            return
        if not set_context_state(llm, prefix.state):
            llm.reset()
            return
        llm.input_ids[: len(prefix.tokens)] = prefix.tokens
        llm.n_tokens = len(prefix.tokens)
        llm._requires_eval = True  # logits of a restored state are stale (llama.py contract)

    def _stream(
        self,
        messages: list[dict],
        kind: str,
        cancel: threading.Event | None,
        finish: dict | None = None,
        **kwargs,
    ) -> Iterator[str]:
        """Text pieces of one generation of chat ``messages``; holds the model (loading it if
        it was released) until the stream ends or is closed."""
        with self._res.use(LOCK_WAIT_S):
            yield from self._generate(self._tokens(messages), kind, cancel, finish, **kwargs)

    def _generate(
        self,
        tokens: list[int],
        kind: str,
        cancel: threading.Event | None,
        finish: dict | None = None,
        sureness: list[float] | None = None,
        **kwargs,
    ) -> Iterator[str]:
        """Text pieces of one generation (the caller holds ``self._res.use``).

        ``finish["reason"]`` is set to llama.cpp's ``finish_reason`` (``"stop"``,
        ``"length"``) when the generation ends. ``sureness`` gets, for each generated token,
        the log-probability of the most likely token at its position
        (:func:`hub.llm.confidence.top_logprob`).
        """
        # lazy: llama_cpp (the LLM runtime) loads only when the LLM is used
        from llama_cpp import StoppingCriteriaList

        chunks = None
        check_fits(self._llm, len(tokens) + kwargs.get("max_tokens", 0), kind)
        try:
            self._restore(kind)

            def stop_here(_ids, _logits) -> bool:
                if sureness is not None:
                    sureness.append(top_logprob(self._llm))
                return self._stopped(cancel)

            stop = StoppingCriteriaList([stop_here])
            chunks = self._llm.create_completion(
                tokens, stream=True, stopping_criteria=stop, **kwargs
            )
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

    def _classify_raw(
        self, tokens: list[int], kind: str, gbnf: str, cancel: threading.Event | None
    ) -> tuple[str, str]:
        """``(JSON text, finish)`` of one greedy classify generation under ``gbnf``, the
        grammar checked on the chosen token first (:func:`hub.llm.greedy.generate_json`);
        the caller holds ``self._res.use``.

        Raises:
            BadInputError: the prompt does not fit, or llama.cpp rejected it.
            TransientError: a decode failed (the context is reset).
        """
        check_fits(self._llm, len(tokens) + CLASSIFY_MAX_TOKENS, kind)
        try:
            self._restore(kind)
            return generate_json(
                self._llm, tokens, gbnf, CLASSIFY_MAX_TOKENS, lambda: self._stopped(cancel)
            )
        except ValueError as exc:
            raise BadInputError(f"llama.cpp rejected the prompt: {exc}", node="llm") from None
        except RuntimeError as exc:
            self._llm.reset()
            raise TransientError(f"llama.cpp failed: {exc}", node="llm") from None

    def classify(
        self, text: str, cancel: threading.Event | None = None, strict: bool = False
    ) -> str:
        """Raw JSON text for ``text`` (grammar-constrained); see :class:`hub.llm.LlmEngine`.

        Raises:
            TimeoutError_: ``cancel`` was set before the output was complete.
            TransientError, BadInputError: llama.cpp failed, or rejected the prompt.
        """
        text = text[:MAX_INPUT_CHARS]
        messages = prompts.classify_messages(text, self._intents, self._home, strict)
        gbnf = self._grammars.for_text(text)
        with self._res.use(LOCK_WAIT_S):  # one hold: the confidence needs the same context
            tokens = self._tokens(messages)
            raw, finish = self._classify_raw(
                tokens, "strict" if strict else "classify", gbnf, cancel
            )
            if self._stopped(cancel):
                raise TimeoutError_("llm classify cancelled", node="llm_intent")
            if finish == "length":
                raise InvalidOutputError(
                    "llm classify output cut by the token limit", node="llm_intent"
                )
            return with_confidence(raw, lambda intent: self._intent_probability(tokens, intent))

    def _intent_probability(self, prompt: list[int], intent: str) -> float:
        """P(``intent`` | ``prompt``) over the allowed intents
        (:func:`hub.llm.confidence.intent_probability`)."""
        return intent_probability(
            self._llm, prompt, intent, (*self._intents, prompts.ANSWER, prompts.NONE)
        )

    def answer(self, question: str, cancel: threading.Event | None = None) -> Iterator[str]:
        """At most two sentences answering ``question``, each yielded as soon as it is complete.

        Generation stops at the second sentence, at ``max_tokens``, or when ``cancel`` is set.
        A sentence the model was unsure of (``[llm] answer_min_logprob``) is not said:
        :func:`hub.llm.stream.withhold_unsure`.
        """
        messages = prompts.answer_messages(question[:MAX_INPUT_CHARS], self._home)
        finish: dict = {}
        sureness: list[float] = []
        pieces = self._stream(
            messages,
            "answer",
            cancel,
            finish,
            sureness=sureness,
            max_tokens=self._settings.max_tokens,
            stop=list(ANSWER_STOPS),
            temperature=0.0,
            repeat_penalty=1.1,
        )
        sentences = stream_sentences(
            pieces,
            prompts.ANSWER_SENTENCES,
            cancel,
            keep_tail=lambda: finish.get("reason") != "length",
        )
        return withhold_unsure(sentences, lambda: mean(sureness), self._settings.answer_min_logprob)


def make_llama_engine(
    settings: LlmSettings,
    home: HomeSettings,
    intents: Collection[str],
    warm: bool = True,
    release: bool = False,
) -> LlamaEngine:
    """Load the configured GGUF (or the embedded SmolLM2) and build the engine.

    With ``warm`` (the default) the prompt cache is built or loaded now; without, only the
    model is loaded (``hub doctor`` asks :meth:`LlamaEngine.cache_ready`). With ``release``
    (long-lived commands) the model is then freed unless ``[llm] keep_loaded_s`` is negative;
    the first call loads it again. Otherwise it is freed ``keep_loaded_s`` after warm-up or
    its last call. With both, when the cache is already on disk the weights are not loaded at
    all (a vocabulary-only ``Llama`` tokenizes the prompts): the model is first loaded by the
    first call, so a process none of whose turns needs the LLM never holds it.

    Raises:
        FatalError: the model is missing or cannot be loaded; the message names the path.
    """
    path = Path(settings.model).expanduser() if settings.model else embedded_model_path()
    load = lambda: load_llama(path, settings.threads)  # noqa: E731
    if warm and release and settings.keep_loaded_s >= 0:
        vocab = load_llama(path, vocab_only=True)
        engine = LlamaEngine(vocab, settings, home, intents, load=load, loaded=False)
        if engine.cache_ready():
            engine._vocab = None  # only for this check (≈ 13 MB): `hub doctor` loads the model
            vocab.close()
            atexit.register(engine.close)
            return engine
    llm = load()
    try:
        engine = LlamaEngine(llm, settings, home, intents, load=load)
        del llm
        if warm:
            engine.warm()
        if release:
            engine.release()
    except (ValueError, RuntimeError) as exc:
        raise FatalError(
            f"cannot prepare LLM model {path}: {exc}", node="llm", file=str(path)
        ) from None
    atexit.register(engine.close)  # before llama.cpp's own exit handlers run (LIFO)
    return engine
