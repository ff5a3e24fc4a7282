"""hub: an offline voice hub that keeps answering.

Stages (one module each): audio, asr, intents, llm, act, tts, store, resilience, graph.
"""

__version__ = "0.1.0"
