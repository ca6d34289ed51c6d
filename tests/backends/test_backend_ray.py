"""``--backend ray``: the same per-question results and totals as the local backend.

The equality tests start a Ray head on 127.0.0.1 with two CPUs for this module and stop
it after. They skip when Ray is not installed, except under ``RAGRAIL_REQUIRE_RAY=1``
(set by scripts/test.sh, which installs ragrail[ray]): there they fail. The tests of
flags and settings need no Ray.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ragrail.backends import RAY_EXTRA
from tests.helpers import between, free_port

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))

import anchor_data  # noqa: E402

from tests.fake_llm import FakeLLM, Received, Reply  # noqa: E402

TIMING_FIELDS = {"created_at"}  # the only field two runs of the same inputs may differ in
JUDGE_KEY = "sk-ray-judge-test-key"


def _ray_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return f"Ray is not installed ({RAY_EXTRA})"
    if shutil.which("ray", path=str(Path(sys.executable).parent)) is None:
        return "Ray's `ray` command is not beside this Python"
    return None


def _ray_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    # no token: Ray 2.5x turns token auth on when ~/.ray/auth_token exists, and a head on
    # 127.0.0.1 for one test module needs none (nor a token written into $HOME)
    env.update(NO_COLOR="1", RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    # the judge test's fake model server takes any key; Ray workers read theirs from the
    # head's environment, as a real cluster's nodes would
    env["OPENAI_API_KEY"] = JUDGE_KEY
    return env


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """The address of a Ray head on 127.0.0.1 with two CPUs, for this module only."""
    missing = _ray_missing()
    if missing is not None:
        if os.environ.get("RAGRAIL_REQUIRE_RAY") == "1":
            pytest.fail(f"{missing}, and RAGRAIL_REQUIRE_RAY=1 says these tests must run")
        pytest.skip(missing)
    port = free_port()
    # a short folder: Ray's socket paths under it must stay within the OS's 107 characters
    temp = tempfile.mkdtemp(prefix="rgray-", dir="/tmp")
    ray = str(Path(sys.executable).parent / "ray")
    # --block keeps the head in this process group, so it is stopped by its own id below
    # (`ray stop` would stop every Ray instance of this user on the machine)
    head = subprocess.Popen(
        [ray, "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
         "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false",
         "--object-store-memory", "200000000", "--temp-dir", temp, "--disable-usage-stats"],
        env=_ray_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        _wait_for_port(port, head, 90)
        yield f"127.0.0.1:{port}"
    finally:
        _stop(head)
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_port(port: int, head: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if head.poll() is not None:
            err = head.stderr.read().decode(errors="replace") if head.stderr else ""
            pytest.fail(f"the Ray head exited with {head.returncode}: {err[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    pytest.fail(f"the Ray head did not listen on port {port} within {seconds:.0f} s")


def _stop(head: subprocess.Popen[bytes]) -> None:
    """Stop the head and every process it started (its process group)."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(head.pid, sig)
        except ProcessLookupError:
            return
        try:
            head.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _ragrail(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragrail", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_ray_env(),
    )  # fmt: skip


def _both(project: Path, address: str) -> tuple[dict, dict]:
    """The --json results of a local run and a Ray run of ``project`` (same exit code)."""
    runs = []
    for name, extra in (("local", []), ("ray", ["--backend", "ray", "--address", address])):
        out = project / f"{name}.json"
        proc = _ragrail("run", "--no-history", "--json", str(out), *extra, cwd=project)
        assert proc.returncode == 0, proc.stderr
        runs.append(out.read_bytes())
    local, ray = (json.loads(r) for r in runs)
    for run in (local, ray):
        for name in TIMING_FIELDS:
            run.pop(name)
    return local, ray


def _assert_byte_equal(local: dict, ray: dict) -> None:
    assert [c["id"] for c in ray["cases"]] == [c["id"] for c in local["cases"]]
    for mine, theirs in zip(ray["cases"], local["cases"], strict=True):
        assert json.dumps(mine, sort_keys=True) == json.dumps(theirs, sort_keys=True), mine["id"]
    assert json.dumps(ray["totals"]) == json.dumps(local["totals"])
    assert json.dumps(ray, sort_keys=True) == json.dumps(local, sort_keys=True)


def test_kitebase_on_ray_equals_local(ray_head: str, tmp_path: Path) -> None:
    project = tmp_path / "kb"
    assert _ragrail("example", "kitebase", str(project), cwd=tmp_path).returncode == 0
    local, ray = _both(project, ray_head)
    _assert_byte_equal(local, ray)
    assert local["totals"]["n_cases"] == 12  # the example's questions, all there


def test_2000_question_benchmark_on_ray_equals_local(ray_head: str, tmp_path: Path) -> None:
    anchor_data.write_project(2000, tmp_path)
    local, ray = _both(tmp_path, ray_head)
    _assert_byte_equal(local, ray)
    assert local["totals"]["n_cases"] == 2000
    # the slices came back in golden-set order, not in the order the tasks finished
    assert [c["id"] for c in ray["cases"]][:3] == ["q0", "q1", "q2"]


def test_ray_run_is_compared_with_the_baseline_like_a_local_one(
    ray_head: str, tmp_path: Path
) -> None:
    project = tmp_path / "kb"
    assert _ragrail("example", "kitebase", str(project), cwd=tmp_path).returncode == 0
    # --top-k 1 loses retrieval the bundled baseline had: a regression, on either backend
    local = _ragrail("run", "--no-history", "--top-k", "1", cwd=project)
    ray = _ragrail("run", "--no-history", "--top-k", "1", "--backend", "ray",
                   "--address", ray_head, cwd=project)  # fmt: skip
    assert local.returncode == ray.returncode == 1, ray.stderr
    assert ray.stdout == local.stdout


def _judge_script(req: Received) -> Reply:
    """Claim verdicts and a rubric verdict that depend on the answer alone, so a slice's
    verdicts are right only if they come back to their own case."""
    from ragrail.scoring.claims import split_claims

    answer = between(req.prompt, "answer")
    if "<criteria>" in req.prompt:
        body = {"verdicts": [{"criterion": "brief", "pass": len(answer) < 300, "reason": "r"}]}
        return Reply(text=json.dumps(body), input_tokens=300, output_tokens=20)
    claims = [
        {"claim": c, "supported": len(c) % 3 != 0, "chunk": None} for c in split_claims(answer)
    ]
    return Reply(text=json.dumps({"claims": claims}), input_tokens=400, output_tokens=60)


def test_judge_on_ray_equals_local(ray_head: str, tmp_path: Path) -> None:
    """--backend ray fans the judge's calls out as Ray tasks (under the cluster-wide
    limiter actor: --judge-rpm): the same verdicts, totals and judge usage as a local
    run, and the same requests to the model server."""
    extra_toml = (
        '\n[judge]\ncriteria = [{name = "brief", description = "short enough"}]\n'
        '\n[prices."fake-judge"]\ninput = 3.0\noutput = 15.0\n'
    )
    runs, counts = [], []
    with FakeLLM(_judge_script) as fake:
        for name, extra in (("local", []), ("ray", ["--backend", "ray", "--address", ray_head])):
            project = tmp_path / name  # a fresh reply cache each: both runs call the server
            assert _ragrail("example", "kitebase", str(project), cwd=tmp_path).returncode == 0
            toml = project / "ragrail.toml"
            toml.write_text(toml.read_text(encoding="utf-8") + extra_toml, encoding="utf-8")
            before = fake.count
            out = project / "r.json"
            proc = _ragrail("run", "--no-history", "--json", str(out), "--judge", "openai",
                            "--judge-model", "fake-judge", "--judge-rpm", "60000", "--judge-base-url", fake.openai_url, *extra, cwd=project)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            counts.append(fake.count - before)
            runs.append(json.loads(out.read_bytes()))
    local, ray = runs
    for run in runs:
        for field in TIMING_FIELDS:
            run.pop(field)
    # a cost is a float sum, added up in the order the calls finish on either backend
    cost = local["judge_usage"].pop("cost_usd")
    assert cost is not None and ray["judge_usage"].pop("cost_usd") == pytest.approx(cost)
    _assert_byte_equal(local, ray)
    assert counts[0] == counts[1] == local["judge_usage"]["calls"]
    judged = [c for c in local["cases"] if c.get("judge")]
    assert len(judged) == 12  # every answer judged: claims and the rubric
    assert counts[0] > 12  # claims calls too, not the rubric alone
    # the verdicts differ between cases: a mix-up of slices would show
    assert len({c["judge"]["faithfulness"] for c in judged}) > 1


# ---------------------------------------------------------------- without Ray


def hide_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this process look as if Ray were not installed (ragrail asks find_spec)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )


def run_without_importing_ray(cwd: Path, *argvs: list[str]) -> subprocess.CompletedProcess:
    """Run each ``ragrail ARGV`` in one fresh interpreter, which fails if any imported Ray or
    exited with an error."""
    code = (
        "import sys\n"
        "from ragrail.cli import main\n"
        f"for args in {list(argvs)!r}:\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_backend_ray_without_ray_installed_is_exit_2(
    cli, kitebase: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide_ray(monkeypatch)
    out = tmp_path / "r.json"
    result = cli("run", "--example", "kitebase", "--backend", "ray", "--json", str(out))
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        "ragrail: error: --backend ray needs Ray, which is not installed: pip install 'ragrail[ray]'"
    ]
    assert not out.exists()
    assert not (tmp_path / ".ragrail").exists()  # nothing ran, nothing recorded


def test_help_and_a_local_run_never_import_ray(tmp_path: Path) -> None:
    proc = run_without_importing_ray(
        tmp_path, ["run", "--help"], ["run", "--example", "kitebase", "--no-history"]
    )
    assert "--backend [local|ray]" in proc.stdout


def test_address_without_the_ray_backend_is_exit_2(cli, tmp_path: Path) -> None:
    result = cli("run", "--example", "kitebase", "--address", "127.0.0.1:6379")
    assert result.code == 2
    assert "--address" in result.err and "--backend ray" in result.err
    assert not (tmp_path / ".ragrail").exists()


@pytest.mark.parametrize(
    ("address", "code", "says"),
    [
        (f"127.0.0.1:{free_port()}", 3, "Connection refused"),  # nothing listens there
        ("[::1]:1", 3, "cannot connect to the Ray cluster at [::1]:1"),
        ("127.0.0.1:0", 2, "port must be from 1 to 65535"),
        ("127.0.0.1:99999", 2, "port must be from 1 to 65535"),
    ],
    # the free port differs in each xdist worker: ids that do not show it keep their
    # collections equal
    ids=["nothing-listens", "ipv6-port-1", "port-0", "port-99999"],
)
def test_an_unreachable_address_fails_fast_in_one_line(
    cli, tmp_path: Path, address: str, code: int, says: str
) -> None:
    # ray.init itself retries a dead address for about 14 minutes, printing as it goes
    if _ray_missing() is not None and os.environ.get("RAGRAIL_REQUIRE_RAY") != "1":
        pytest.skip(_ray_missing() or "")
    started = time.monotonic()
    result = cli("run", "--example", "kitebase", "--backend", "ray", "--address", address)
    assert time.monotonic() - started < 30
    assert result.code == code, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragrail:") and says in lines[0], lines
    assert not (tmp_path / ".ragrail").exists()


@contextmanager
def not_ray(reply: bytes | None, seconds: float = 60) -> Iterator[str]:
    """``127.0.0.1:PORT`` of a TCP server that is not Ray: it takes every connection and
    sends ``reply`` (None: nothing). It stops when the block ends, or after ``seconds``."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        deadline = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)
        for conn in held:
            conn.close()
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)


@pytest.mark.parametrize(
    "reply",
    [None, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"],
    ids=["silent", "http1"],
)
def test_an_address_where_something_else_listens_fails_in_seconds(
    cli, tmp_path: Path, reply: bytes | None
) -> None:
    """An open port that is not Ray: ray.init retried it for minutes, printing Ray's log
    lines; a gRPC handshake that never comes is exit 3 in one line."""
    if _ray_missing() is not None and os.environ.get("RAGRAIL_REQUIRE_RAY") != "1":
        pytest.skip(_ray_missing() or "")
    with not_ray(reply) as address:
        started = time.monotonic()
        result = cli("run", "--example", "kitebase", "--backend", "ray", "--address", address)
        took = time.monotonic() - started
    assert result.code == 3, result.err
    assert took < 15, took  # the 5 s handshake wait, not Ray's minutes of retries
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert f"cannot connect to the Ray cluster at {address}" in lines[0]
    assert "not Ray" in lines[0]
    assert not (tmp_path / ".ragrail").exists()


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("127.0.0.1:6379 ", "has spaces around it"),
        (" 127.0.0.1:6379", "has spaces around it"),
        ("127.0.0.1", "is not HOST:PORT"),
        ("127.0.0.1:6379/x", "is not HOST:PORT"),
        ("http://127.0.0.1:8265", "is not HOST:PORT"),
        ("127.0.0.1:-1", "is not HOST:PORT"),
    ],
)
def test_a_malformed_address_is_exit_2_before_any_connection(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str, says: str
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"connected to {args}")

    # a malformed address once went to ray.init, which retried it for minutes
    monkeypatch.setattr("ragrail.backends.ray.connect", no_connection)
    monkeypatch.setattr(socket, "create_connection", no_connection)
    result = cli("run", "--example", "kitebase", "--backend", "ray", "--address", address)
    assert result.code == 2, result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "--address" in lines[0] and says in lines[0], lines
    assert repr(address) in lines[0]  # the space shows
    assert not (tmp_path / ".ragrail").exists()


def test_a_malformed_run_address_names_the_project_file(
    cli, kitebase: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"connected to {args}")

    monkeypatch.setattr("ragrail.backends.ray.connect", no_connection)
    project = tmp_path / "kb"
    shutil.copytree(kitebase, project)
    toml = project / "ragrail.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8") + '\n[run]\nbackend = "ray"\naddress = "127.0.0.1:6379 "\n',
        encoding="utf-8",
    )
    result = cli("run", "--config", str(toml))
    assert result.code == 2
    assert "ragrail.toml" in result.err and "run.address" in result.err
    assert "has spaces around it" in result.err


def test_rerun_failures_on_ray_is_exit_2(cli, tmp_path: Path) -> None:
    if _ray_missing() is not None and os.environ.get("RAGRAIL_REQUIRE_RAY") != "1":
        pytest.skip("without Ray, --backend ray is refused for that first")
    result = cli("run", "--example", "kitebase", "--backend", "ray", "--rerun-failures", "1")
    assert result.code == 2
    assert "--rerun-failures runs on the local backend" in result.err


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('[run]\nbackend = "spark"\n', "backend"),
        ("[run]\nworkers = 4\n", "workers"),
        ('[run]\nbackend = "ray"\naddress = " "\n', "address"),
    ],
)
def test_a_bad_run_table_is_exit_2(
    cli, kitebase: Path, tmp_path: Path, table: str, needle: str
) -> None:
    project = tmp_path / "kb"
    shutil.copytree(kitebase, project)
    toml = project / "ragrail.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n" + table, encoding="utf-8")
    before = sorted(p.name for p in project.iterdir())
    result = cli("run", "--config", str(toml))
    assert result.code == 2
    assert "ragrail.toml" in result.err and needle in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert sorted(p.name for p in project.iterdir()) == before


def test_run_table_chooses_the_backend(cli, kitebase: Path, tmp_path: Path, monkeypatch) -> None:
    """[run] backend = "ray" is read: without Ray it is the same exit 2 as the flag."""
    hide_ray(monkeypatch)
    project = tmp_path / "kb"
    shutil.copytree(kitebase, project)
    toml = project / "ragrail.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[run]\nbackend = "ray"\n', "utf-8")
    assert cli("run", "--config", str(toml)).code == 2
    # the flag wins over the file
    assert cli("run", "--config", str(toml), "--backend", "local", "--no-history").code == 0


def test_sweep_on_ray_equals_local(ray_head: str, tmp_path: Path) -> None:
    project = tmp_path / "kb"
    assert _ragrail("example", "kitebase", str(project), cwd=tmp_path).returncode == 0
    tables = []
    for name, extra in (("local", []), ("ray", ["--backend", "ray", "--address", ray_head])):
        out = project / f"{name}.json"
        proc = _ragrail("sweep", "--top-k", "1,3", "--retriever", "standin,bm25",
                        "--json", str(out), *extra, cwd=project)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        tables.append(out.read_bytes())
    assert tables[0] == tables[1]
    assert len(json.loads(tables[0])) == 4  # 2 retrievers x 2 k, ranked alike


def test_an_app_with_file_name_sources_and_no_markers_on_ray_equals_local(
    ray_head: str, tmp_path: Path
) -> None:
    """The slices score "auto" as required; the driver decides for the whole run (no
    answer cites: not required) and reads the sources as the documents, as a local run."""
    from tests.system.test_app_sources import app_project

    project = app_project(tmp_path, "docs/{}.md", settings={"chunk_size": 512})
    local, ray = _both(project, ray_head)
    for run in (local, ray):  # the app is called live: its timings differ, nothing else
        for case in run["cases"]:
            case["trace"].pop("latency_ms")
    _assert_byte_equal(local, ray)
    assert ray["config"]["citations"] == "none cited"
    assert ray["config"]["settings"] == {"chunk_size": 512}
    assert ray["totals"]["answers_passed"] == ray["totals"]["n_answers"] == 3
    assert ray["totals"]["hit_rate"] == 1.0
