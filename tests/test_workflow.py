"""The generated GitHub Actions workflow: what it declares, where it installs ragrail from,
and its jobs' steps (install, lint, eval, summary) run as written in a fresh venv, offline."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import site
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragrail.scaffold import InstallSource, copy_example, install_source_from, workflow_text
from tests.fake_llm import FakeLLM

REPO = Path(__file__).resolve().parents[1]
SHA = "0123456789abcdef0123456789abcdef01234567"
GIT = InstallSource(f"ragrail @ git+https://example.org/acme/ragrail.git@{SHA}", "git", True)
CACHE_KEY_FILES = "hashFiles('ragrail.toml', 'golden.*')"


def load(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean true; GitHub reads "on"
    return workflow.get("on", workflow.get(True))


def step(job: dict[str, Any], name: str) -> dict[str, Any]:
    found = [s for s in job["steps"] if s.get("name") == name]
    assert len(found) == 1, f"no single step named {name!r}"
    return found[0]


def uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load(workflow_text(GIT))


# ------------------------------------------------------------------ structure


def test_installs_ragrail_from_the_pinned_source_in_every_job(workflow):
    assert workflow["env"]["RAGRAIL_SPEC"] == GIT.spec
    for name in ("offline", "real-model"):
        assert step(workflow["jobs"][name], "install ragrail")["run"] == (
            'python -m pip install "$RAGRAIL_SPEC"'
        )
    text = workflow_text(GIT)
    assert "not published on PyPI" in text and "@RAGRAIL" not in text  # every mark filled in
    assert not re.search(r"pip install ragrail\b", text.replace("`pip install ragrail`", ""))


def test_runs_on_pull_requests_and_a_schedule(workflow):
    on = triggers(workflow)
    assert "labeled" in on["pull_request"]["types"] and "synchronize" in on["pull_request"]["types"]
    assert on["schedule"][0]["cron"] and "workflow_dispatch" in on
    assert workflow["permissions"] == {"contents": "read"}


def test_offline_job_lints_then_evaluates_with_every_output(workflow):
    job = workflow["jobs"]["offline"]
    names = [s.get("name") for s in job["steps"]]
    assert names.index("lint the golden set") < names.index("eval (exits 1 on any regression)")
    run = step(job, "eval (exits 1 on any regression)")["run"]
    assert "--junit junit.xml" in run and "--markdown summary.md" in run
    assert "--json results.json" in run
    assert "secrets." not in json.dumps(job)  # the offline job never sees a key


def test_state_is_restored_first_and_saved_even_after_a_regression(workflow):
    job = workflow["jobs"]["offline"]
    (restore,) = uses(job, "actions/cache/restore")
    (save,) = uses(job, "actions/cache/save")
    steps = job["steps"]
    assert steps.index(restore) < steps.index(step(job, "lint the golden set"))
    assert steps.index(save) == len(steps) - 1
    assert restore["with"]["path"] == save["with"]["path"] == ".ragrail"
    key = restore["with"]["key"]
    assert key == save["with"]["key"]
    assert CACHE_KEY_FILES in key and "github.run_id" in key
    # each run saves a new entry; the newest with the same golden set and config comes back
    prefixes = restore["with"]["restore-keys"].splitlines()
    assert prefixes[0] == key.split("${{ github.run_id }}")[0]
    assert key.startswith(prefixes[1])
    assert save["if"] == "always()"


def test_summary_goes_to_the_job_summary_and_one_pull_request_comment(workflow):
    job = workflow["jobs"]["offline"]
    summary = step(job, "summary")
    assert summary["if"] == "always()"
    assert 'cat summary.md >> "$GITHUB_STEP_SUMMARY"' in summary["run"]
    assert "ragrail report --from-json results.json -o report.html" in summary["run"]
    (comment,) = uses(job, "actions/github-script")
    assert "github.event_name == 'pull_request'" in comment["if"]
    assert comment["if"].startswith("always()")
    assert comment["continue-on-error"] is True  # a fork's read-only token must not fail CI
    script = comment["with"]["script"]
    assert "<!-- ragrail-summary -->" in script
    assert "updateComment" in script and "createComment" in script
    assert job["permissions"]["pull-requests"] == "write"


def test_reports_are_uploaded_whatever_the_verdict(workflow):
    for name, suffix in (("offline", ""), ("real-model", "-claude")):
        (upload,) = uses(workflow["jobs"][name], "actions/upload-artifact")
        assert upload["if"] == "always()"
        paths = upload["with"]["path"].split()
        assert f"report{suffix}.html" in paths and f"junit{suffix}.xml" in paths


def test_real_model_job_needs_the_secret_and_a_reason_to_run(workflow):
    jobs = workflow["jobs"]
    gate = jobs["real-model-key"]
    for event in ("schedule", "workflow_dispatch", "pull_request"):
        assert f"github.event_name == '{event}'" in gate["if"]
    assert "contains(github.event.pull_request.labels.*.name, 'real-model')" in gate["if"]
    assert gate["steps"][0]["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    real = jobs["real-model"]
    assert real["needs"] == "real-model-key"
    assert real["if"] == "needs.real-model-key.outputs.present == 'true'"
    assert real["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    assert (
        "ragrail run --claude" in step(real, "eval with Claude (exits 1 on any regression)")["run"]
    )
    assert uses(real, "actions/cache/restore")[0]["with"]["key"].startswith("ragrail-claude-")


@pytest.mark.parametrize(
    "spec",
    [
        "ragrail @ https://example.org/ragrail-0.1.0-py3-none-any.whl#sha256=ab12",
        'ragrail @ git+https://example.org/a b.git@v1 # "quoted": yes',
        "./ci/ragrail-0.1.0-py3-none-any.whl",
    ],
)
def test_any_spec_stays_one_yaml_value(spec):
    assert load(workflow_text(InstallSource(spec, "here", True)))["env"]["RAGRAIL_SPEC"] == spec


def test_origin_text_cannot_add_lines_to_the_workflow():
    origin = "a folder\nenv:\n  RAGRAIL_SPEC: evil\x1b[2J"
    text = workflow_text(InstallSource("ragrail==0.1.0", origin, False))
    assert load(text)["env"]["RAGRAIL_SPEC"] == "ragrail==0.1.0"
    assert "evil" in text and "\x1b" not in text and "\n  RAGRAIL_SPEC: evil" not in text


# ------------------------------------------------------------------ install source


def test_a_git_install_is_pinned_to_its_commit():
    direct = {
        "url": "https://github.com/acme/ragrail.git",
        "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "v0.1.0"},
    }
    source = install_source_from(direct, "0.1.0")
    assert source.spec == f"ragrail @ git+https://github.com/acme/ragrail.git@{SHA}"
    assert source.reachable and "v0.1.0" in source.origin


def test_credentials_never_reach_the_committed_file():
    https = {"url": "https://user:tok3n@github.com/acme/ragrail.git", "vcs_info": {"vcs": "git"}}
    assert install_source_from(https, "0.1.0").spec == (
        "ragrail @ git+https://github.com/acme/ragrail.git"
    )
    token = {"url": "https://tok3n@github.com/acme/ragrail.git", "vcs_info": {"vcs": "git"}}
    assert "tok3n" not in repr(install_source_from(token, "0.1.0"))
    ssh = {"url": "ssh://git@github.com/acme/ragrail.git", "vcs_info": {"vcs": "git"}}
    assert install_source_from(ssh, "0.1.0").spec == (
        "ragrail @ git+ssh://git@github.com/acme/ragrail.git"
    )


def test_a_wheel_on_a_server_is_pinned_to_its_hash():
    direct = {
        "url": "https://example.org/ragrail-0.1.0-py3-none-any.whl",
        "archive_info": {"hashes": {"sha256": "ab12"}},
    }
    assert install_source_from(direct, "0.1.0").spec == (
        "ragrail @ https://example.org/ragrail-0.1.0-py3-none-any.whl#sha256=ab12"
    )


@pytest.mark.parametrize(
    "direct",
    [
        {"url": "file:///home/me/ragrail", "dir_info": {"editable": True}},
        {"url": "file:///home/me/ragrail", "dir_info": {}},
        {"url": "file:///tmp/ragrail-0.1.0-py3-none-any.whl", "archive_info": {}},
        {"url": "file:///home/me/ragrail", "vcs_info": {"vcs": "git", "commit_id": SHA}},
        {"url": 7, "dir_info": "odd"},
    ],
)
def test_a_local_install_pins_the_version_and_says_it_is_unreachable(direct):
    source = install_source_from(direct, "0.1.0")
    assert source.spec == "ragrail==0.1.0" and not source.reachable
    assert "/home/me" not in source.origin  # a local path has no place in a committed file


def test_no_direct_url_means_an_index():
    source = install_source_from(None, "0.1.0")
    assert source.spec == "ragrail==0.1.0" and source.reachable


# ------------------------------------------------------------------ the steps, run


@dataclass
class StepRun:
    name: str
    code: int | None  # None: not run (an action, or skipped after a failure)
    output: str


@dataclass
class JobRun:
    steps: list[StepRun]
    summary: str  # what the steps wrote to $GITHUB_STEP_SUMMARY
    outputs: str  # what they wrote to $GITHUB_OUTPUT

    def code(self, name: str) -> int | None:
        (found,) = [s for s in self.steps if s.name == name]
        return found.code

    def ran(self) -> list[str]:
        return [s.name for s in self.steps if s.code is not None]


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _expand(value: object, secrets: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        assert expression.startswith("secrets."), f"cannot evaluate {expression!r} in a run step"
        return secrets.get(expression.removeprefix("secrets."), "")  # unset secrets are empty

    return _EXPRESSION.sub(one, str(value))


def run_job(
    workflow: dict[str, Any],
    name: str,
    workdir: Path,
    venv: Path,
    secrets: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> JobRun:
    """Run a job's `run:` steps the way a GitHub runner does (bash -e, the workflow's, job's
    and step's env, `if: always()` after a failure); actions (`uses:`) are not run. The one
    substitution: RAGRAIL_SPEC is this checkout, so the install is offline."""
    secrets = secrets or {}
    job = workflow["jobs"][name]
    files = workdir.parent / f"{name}-runner"
    files.mkdir(exist_ok=True)
    summary, outputs = files / "step_summary.md", files / "output"
    summary.write_text("")  # each run of a job starts with empty ones, as on GitHub
    outputs.write_text("")
    base = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(files),  # no user pip config or user site
        "LANG": "C.UTF-8",
        "TMPDIR": str(files),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_WORKSPACE": str(workdir),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        "NO_COLOR": "1",
        # Offline: pip installs the checkout and nothing else. "0" is pip's inverted way
        # of turning build isolation off: hatchling comes from the current environment.
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    scopes = [workflow.get("env", {}), job.get("env", {})]
    failed = False
    runs = []
    for number, spec in enumerate(job["steps"]):
        label = spec.get("name") or spec.get("id") or spec.get("uses") or str(number)
        condition = spec.get("if")
        if "uses" in spec or (failed and condition != "always()"):
            runs.append(StepRun(label, None, ""))
            continue
        assert condition in (None, "always()"), f"{label}: the runner cannot evaluate {condition!r}"
        assert "shell" not in spec and "working-directory" not in spec
        env = dict(base)
        for scope in [*scopes, spec.get("env", {})]:
            env.update({k: _expand(v, secrets) for k, v in scope.items()})
        env.update({"RAGRAIL_SPEC": str(REPO), **(extra_env or {})})
        script = files / f"step{number}.sh"
        script.write_text(_expand(spec["run"], secrets))
        proc = subprocess.run(
            ["bash", "-e", str(script)],  # GitHub's default shell for a run step on Linux
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=180,
        )
        runs.append(StepRun(label, proc.returncode, proc.stdout))
        failed = failed or proc.returncode != 0
    return JobRun(runs, summary.read_text(), outputs.read_text())


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv without ragrail. The current environment's packages (ragrail's
    dependencies, pip, hatchling) are visible through a .pth file, so installing ragrail
    needs no network; a .pth line adds a folder, not the editable install's own hook."""
    assert importlib.util.find_spec("hatchling"), "pip install -e '.[test]' (needs hatchling)"
    root = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    purelib = subprocess.run(
        [
            root / "bin" / "python",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}
    (Path(purelib) / "_current_env.pth").write_text("".join(f"{p}\n" for p in sorted(here)))
    return root


def installed_from(venv: Path) -> Path:
    proc = subprocess.run(
        [venv / "bin" / "python", "-c", "import ragrail; print(ragrail.__file__)"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"]},
    )
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def show(job: JobRun) -> str:
    return "\n".join(f"--- {s.name}: {s.code}\n{s.output[-2000:]}" for s in job.steps)


OFFLINE_RUN_STEPS = [
    "install ragrail",
    "lint the golden set",
    "eval (exits 1 on any regression)",
    "summary",
]


def test_offline_job_runs_as_written_and_goes_red_on_a_regression(venv, tmp_path):
    project = tmp_path / "repo"
    copy_example("kitebase", project, GIT)
    workflow = load((project / ".github" / "workflows" / "evals.yml").read_text())

    job = run_job(workflow, "offline", project, venv)
    assert job.ran() == OFFLINE_RUN_STEPS, show(job)
    assert all(s.code == 0 for s in job.steps if s.code is not None), show(job)
    assert installed_from(venv).is_relative_to(venv)  # the venv's own ragrail, not this checkout
    assert job.summary.startswith("## ragrail: Kitebase bot: no regressions")
    assert "| hit rate@3 | 91% | 91% |" in job.summary
    cases = ET.parse(project / "junit.xml").getroot().iter("testcase")
    assert len(list(cases)) == 12
    assert json.loads((project / "results.json").read_text())
    assert (project / "report.html").read_text().lower().startswith("<!doctype html>")
    assert (project / ".ragrail" / "history.sqlite").is_file()  # what the cache step keeps
    assert (project / ".ragrail" / ".gitignore").read_text() == "*\n"

    config = project / "ragrail.toml"
    config.write_text(re.sub(r"(?m)^top_k = 3", "top_k = 1", config.read_text()))
    for output in ("summary.md", "report.html"):
        (project / output).unlink()
    job = run_job(workflow, "offline", project, venv)
    assert job.code("eval (exits 1 on any regression)") == 1, show(job)
    # the verdict fails the job, and the summary and report still come out
    assert job.code("summary") == 0, show(job)
    assert job.summary.startswith("## ragrail: Kitebase bot: 3 questions got worse")
    assert "`lost-phone` | retrieval 100% -&gt; 0%" in job.summary
    assert (project / "report.html").is_file()


def test_real_model_job_runs_against_a_local_api_and_reuses_its_replies(venv, tmp_path):
    project = tmp_path / "repo"
    copy_example("kitebase", project, GIT)
    workflow = load((project / ".github" / "workflows" / "evals.yml").read_text())
    key = "sk-ant-test-not-a-real-key"

    gate = run_job(workflow, "real-model-key", project, venv, secrets={"ANTHROPIC_API_KEY": key})
    assert gate.outputs.split() == ["present=true"], show(gate)
    assert key not in show(gate)
    gate = run_job(workflow, "real-model-key", tmp_path, venv, secrets={})
    assert gate.outputs.split() == ["present=false"], show(gate)

    with FakeLLM() as fake:
        api = {"ANTHROPIC_BASE_URL": fake.url}
        job = run_job(workflow, "real-model", project, venv, {"ANTHROPIC_API_KEY": key}, api)
        assert all(s.code == 0 for s in job.steps if s.code is not None), show(job)
        assert "eval with Claude (exits 1 on any regression)" in job.ran()
        calls = fake.count
        sent = fake.received[0].headers
        assert calls > 0
        assert key in {sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer ")}
        assert "claude-opus-5" in job.summary
        assert (project / "report-claude.html").is_file()
        assert (project / "junit-claude.xml").is_file()
        assert key not in show(job) + job.summary

        # the next run restores .ragrail: unchanged questions cost nothing
        job = run_job(workflow, "real-model", project, venv, {"ANTHROPIC_API_KEY": key}, api)
        assert job.code("eval with Claude (exits 1 on any regression)") == 0, show(job)
        assert fake.count == calls
