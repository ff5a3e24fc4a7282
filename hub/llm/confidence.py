"""How sure the local model is, read from its logits (llama.cpp).

- :func:`with_confidence`: the classifier's ``confidence`` replaced by the model's probability
  of the intent it wrote. The model's self-reported number is a copy of the few-shot
  examples' (always 0.9), so it says nothing.
- :func:`intent_probability`: P(intent | prompt) among the allowed intents: the product over
  the intent's tokens of the softmax restricted to the tokens the candidates allow there.
- :func:`top_logprob`: log P of the most likely next token (``[llm] answer_min_logprob``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from hub.llm.model import llama_cpp_bindings


def with_confidence(raw: str, probability: Callable[[str], float]) -> str:
    """``raw`` (the classifier's JSON) with ``confidence`` set to ``probability(intent)``,
    rounded to 3 places. Output that is not a JSON object with a string intent is returned
    unchanged."""
    try:
        obj = json.loads(raw)
        intent = obj["intent"]
    except (ValueError, KeyError, TypeError):
        return raw
    if not isinstance(intent, str):
        return raw
    obj["confidence"] = round(probability(intent), 3)
    return json.dumps(obj)


def intent_probability(llm, prompt: list[int], intent: str, candidates: Sequence[str]) -> float:
    """P(``intent`` | ``prompt``) over ``candidates``, from ``llm``'s logits (a
    ``llama_cpp.Llama`` whose context holds ``prompt``); 0.0 for an intent not among them.
    Evaluates tokens in ``llm``'s context (its cached prefix is kept)."""
    low = llama_cpp_bindings()
    seqs = {
        c: llm.tokenize(f'{{"intent": "{c}"'.encode(), add_bos=False, special=False)
        for c in candidates
    }
    if intent not in seqs:
        return 0.0
    chosen, alive, prob = seqs[intent], list(seqs.values()), 1.0
    llm.n_tokens = min(llm.n_tokens, len(prompt) - 1)  # the context holds the prompt
    llm.eval(prompt[llm.n_tokens :])  # re-evaluated from its last token: fresh logits
    for pos, token in enumerate(chosen):
        allowed = {seq[pos] for seq in alive if len(seq) > pos}
        if len(allowed) > 1:
            logits = np.ctypeslib.as_array(low.llama_get_logits(llm.ctx), shape=(llm.n_vocab(),))
            picked = logits[sorted(allowed)]
            weights = np.exp(picked - picked.max())
            prob *= float(weights[sorted(allowed).index(token)] / weights.sum())
        alive = [seq for seq in alive if len(seq) > pos and seq[pos] == token]
        if len(alive) == 1:
            break
        llm.eval([token])
    return prob


def top_logprob(llm) -> float:
    """log P of the most likely next token, from the logits llama.cpp computed last in
    ``llm`` (the distribution the token just sampled was drawn from): max(logits) −
    logsumexp."""
    logits = np.ctypeslib.as_array(
        llama_cpp_bindings().llama_get_logits(llm.ctx), shape=(llm.n_vocab(),)
    )
    top = float(logits.max())
    return -float(np.log(np.exp(logits - top).sum()))


def mean(values: list[float]) -> float:
    """The mean of ``values``; 0.0 (sure) when there are none yet."""
    return sum(values) / len(values) if values else 0.0
