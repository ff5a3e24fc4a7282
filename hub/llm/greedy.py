"""Greedy grammar-constrained generation that checks the grammar on the chosen token first.

``llama-cpp-python`` puts llama.cpp's grammar sampler before the greedy pick, so at every
step the grammar is matched against all of the vocabulary (49,152 tokens for SmolLM2,
262,144 for Gemma 3): measured 80-100 ms per token on this machine under load, as much as
the model's own decode (BENCHMARKS.md, "The LLM in a large home"). llama.cpp's own
``common_sampler_sample`` avoids that: it takes the model's best token, asks the grammar
about that one token, and applies the grammar to the whole vocabulary only when the token
is rejected (``grammar_first`` false). :func:`generate_json` does the same for greedy
decoding, so most steps (the JSON's punctuation and keys, which the model predicts anyway)
check a single token. The output is the same as grammar-then-greedy: the best token the
grammar allows.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence

import numpy as np

from hub.llm.model import llama_cpp_bindings


def _logits(llm, low) -> np.ndarray:
    """The logits of the last evaluated token (one row of the vocabulary's size)."""
    return np.ctypeslib.as_array(low.llama_get_logits(llm.ctx), shape=(llm.n_vocab(),))


def _allows(low, sampler, one, token: int, logit: float) -> bool:
    """Whether ``sampler`` (a grammar) accepts ``token`` next: the grammar applied to a
    one-candidate array ``one`` (a ``llama_token_data * 1``)."""
    one[0].id, one[0].logit, one[0].p = token, logit, 0.0
    array = low.llama_token_data_array(data=one, size=1, selected=-1, sorted=False)
    low.llama_sampler_apply(sampler, ctypes.byref(array))
    return bool(np.isfinite(one[0].logit))


def _best_allowed(low, sampler, logits: np.ndarray) -> int:
    """The highest-logit token of the whole vocabulary that the grammar allows."""
    n = len(logits)
    data = (low.llama_token_data * n)()
    view = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_float)), (n * 3,))
    rows = view.reshape(n, 3)
    rows[:, 0] = np.arange(n, dtype=np.int32).view(np.float32)
    rows[:, 1], rows[:, 2] = logits, 0.0
    array = low.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
    low.llama_sampler_apply(sampler, ctypes.byref(array))
    return int(np.argmax(rows[:, 1]))


def generate_json(
    llm, tokens: Sequence[int], gbnf: str, max_tokens: int, stopped: Callable[[], bool]
) -> tuple[str, str]:
    """Greedy continuation of ``tokens`` in ``llm`` (a ``llama_cpp.Llama``) under the GBNF
    grammar ``gbnf`` (root rule ``root``), reusing the longest token prefix already in the
    context. Returns ``(text, finish)`` with ``finish`` ``"stop"`` (end of generation),
    ``"length"`` (``max_tokens`` reached) or ``"cancel"`` (``stopped()`` became true).

    Raises:
        ValueError: llama.cpp could not parse ``gbnf``.
        RuntimeError: a decode failed (from ``Llama.eval``).
    """
    low = llama_cpp_bindings()
    vocab = low.llama_model_get_vocab(llm.model)
    sampler = low.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
    if not sampler:
        raise ValueError("llama.cpp could not parse the classify grammar")
    one = (low.llama_token_data * 1)()
    try:
        kept = 0
        limit = min(llm.n_tokens, len(tokens) - 1)  # at least one token evaluated: its logits
        while kept < limit and llm.input_ids[kept] == tokens[kept]:
            kept += 1
        llm.n_tokens = kept
        llm.eval(list(tokens[kept:]))
        out: list[int] = []
        for _ in range(max_tokens):
            if stopped():
                return _text(llm, out), "cancel"
            logits = _logits(llm, low)
            token = int(np.argmax(logits))
            if not _allows(low, sampler, one, token, float(logits[token])):
                token = _best_allowed(low, sampler, logits)
            if low.llama_vocab_is_eog(vocab, token):
                return _text(llm, out), "stop"
            low.llama_sampler_accept(sampler, token)
            out.append(token)
            llm.eval([token])
        return _text(llm, out), "length"
    finally:
        low.llama_sampler_free(sampler)


def _text(llm, tokens: list[int]) -> str:
    """The text of generated ``tokens``."""
    return llm.detokenize(tokens).decode("utf-8", errors="ignore")
