#!/usr/bin/env bash
# Lint and type-check: `ruff check`, `ruff format --check` (the whole repo, settings in
# pyproject.toml [tool.ruff]) and `mypy` (the parts listed in [tool.mypy] files). Runs every
# check even when one fails, then exits 1 if any failed. Called by scripts/test.sh before
# pytest; needs the venv of scripts/setup.sh (ruff and mypy come with the `test` extra).
#
#   scripts/lint.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
failed=()
echo "lint: ruff check" >&2
"$bin/ruff" check --output-format concise . || failed+=("ruff check")
echo "lint: ruff format --check" >&2
"$bin/ruff" format --check . || failed+=("ruff format")
echo "lint: mypy" >&2
"$bin/mypy" || failed+=("mypy")
if [ ${#failed[@]} -gt 0 ]; then
    echo "lint: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "lint: ok" >&2
