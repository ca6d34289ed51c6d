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

from ragrail import scaffold
from ragrail.project import load_config
from ragrail.scaffold import InstallSource, copy_example, install_source_from, workflow_text
from ragrail.scaffold.plan import WorkflowPlan, app_installs, plan_for, repository_root
from ragrail.scaffold.steps import INSTALL_STEP, START_STEP, to_do
from ragrail.scaffold.workflow import fill_blocks
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


def _expand(value: object, secrets: dict[str, str], workspace: Path | None = None) -> str:
    def one(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression == "github.workspace" and workspace is not None:
            return str(workspace)
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
    and step's env, `if: always()` after a failure, the job's default working directory and
    a step's own, from the workspace `workdir`); actions (`uses:`) are not run. The one
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
        assert "shell" not in spec
        env = dict(base)
        for scope in [*scopes, spec.get("env", {})]:
            env.update({k: _expand(v, secrets) for k, v in scope.items()})
        env.update({"RAGRAIL_SPEC": str(REPO), **(extra_env or {})})
        script = files / f"step{number}.sh"
        script.write_text(_expand(spec["run"], secrets))
        folder = spec.get(
            "working-directory",
            job.get("defaults", {}).get("run", {}).get("working-directory", "."),
        )
        proc = subprocess.run(
            ["bash", "-e", str(script)],  # GitHub's default shell for a run step on Linux
            cwd=workdir / _expand(folder, secrets, workdir),  # relative: from the workspace
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


# ------------------------------------------------------------------ each system kind

PYTHON = WorkflowPlan(kind="python", target="mybot.rag:answer", installs=("-r requirements.txt",))
BARE_PYTHON = WorkflowPlan(kind="python", target="mybot.rag:answer")
HTTP = WorkflowPlan(kind="http", url="http://localhost:8123/ask", secrets=("BOT_TOKEN",))
REMOTE = WorkflowPlan(kind="http", url="https://staging.example.org/ask")
OUTPUTS = WorkflowPlan(kind="outputs", outputs="answers/outputs.jsonl")
CLAUDE_PIPELINE = WorkflowPlan(kind="pipeline", answerer="anthropic", model="claude-haiku-9")
OWN = {"python": PYTHON, "bare": BARE_PYTHON, "http": HTTP, "remote": REMOTE, "outputs": OUTPUTS}
EDIT_NEEDED = "edit the step '{}' in .github/workflows/evals.yml (marked EDIT)"
SECRET_REF = re.compile(r"\$\{\{ secrets\.([A-Z_][A-Z0-9_]*) \}\}")


def render(plan: WorkflowPlan) -> tuple[str, dict[str, Any]]:
    text = workflow_text(GIT, plan)
    return text, load(text)


def comments(text: str) -> str:
    return "\n".join(ln.strip() for ln in text.splitlines() if ln.strip().startswith("#"))


def run_step_alone(spec: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", spec["run"]], cwd=cwd, capture_output=True, text=True, timeout=30
    )


def test_blocks_are_replaced_kept_or_dropped_with_what_they_hold():
    template = (
        "a\n  # @@ one\n  kept\n  # @@ end\n# @@ outer\nx\n    # @@ inner\n    y\n"
        "    # @@ end\n# @@ end\nb\n"
    )
    assert fill_blocks(template, {}) == "a\n  kept\nx\n    y\nb\n"
    assert fill_blocks(template, {"one": ["new", "", "  more"]}) == (
        "a\n  new\n\n    more\nx\n    y\nb\n"
    )
    # a block inside a replaced one goes with it, whatever it would have been
    assert fill_blocks(template, {"outer": [], "inner": ["z"]}) == "a\n  kept\nb\n"


def test_the_built_in_pipeline_is_the_template_as_written():
    text = workflow_text(GIT)
    assert text == workflow_text(GIT, WorkflowPlan())
    assert "@@" not in text
    assert "the built-in pipeline over the\n# documents, answered by the offline stand-in" in text
    assert list(load(text)["jobs"]) == ["offline", "real-model-key", "real-model"]


@pytest.mark.parametrize("kind", sorted(OWN))
def test_a_system_of_its_own_gets_one_eval_job_and_no_real_model_job(kind):
    text, workflow = render(OWN[kind])
    assert list(workflow["jobs"]) == ["eval"]
    flat = " ".join(text.replace("#", " ").split())
    for said in ("no separate real-model job", "no real-model job"):
        flat = flat.replace(said, "")
    assert "--claude" not in text and "real-model" not in flat and "ANTHROPIC" not in text
    assert "stand-in" not in text and "@@" not in text and "offline" not in text
    assert "labeled" not in triggers(workflow)["pull_request"]["types"]
    job = workflow["jobs"]["eval"]
    names = [s.get("name") for s in job["steps"]]
    # the eval itself is the built-in pipeline's: lint, run with every output, summary, upload
    assert names.index("install ragrail") < names.index("lint the golden set")
    assert step(job, "eval (exits 1 on any regression)")["run"] == (
        "ragrail run --junit junit.xml --markdown summary.md --json results.json"
    )
    (restore,) = uses(job, "actions/cache/restore")
    assert restore["with"]["key"].startswith("ragrail-eval-")


def test_comments_describe_the_configured_system():
    said = {kind: comments(render(plan)[0]) for kind, plan in OWN.items()}
    said = {kind: " ".join(text.replace("#", " ").split()) for kind, text in said.items()}
    assert (
        "your Python function mybot.rag:answer, imported from the project folder"
        in (said["python"])
    )
    assert (
        "your service at http://localhost:8123/ask: ragrail POSTs each question" in (said["http"])
    )
    assert "The job starts it (the step marked EDIT) and waits for its port" in said["http"]
    assert "reachable from GitHub's runners" in said["remote"]
    assert (
        "the answers already in answers/outputs.jsonl: ragrail scores that file and calls "
        "nothing, so the file must be in the repository" in said["outputs"]
    )
    assert "commit the new file with the change" in said["outputs"]
    for kind in ("python", "http", "remote"):
        assert "this job is the real run and there is no separate real-model job" in said[kind]


def test_a_python_target_installs_what_was_found():
    _, workflow = render(
        WorkflowPlan(kind="python", target="bot:answer", installs=("-r requirements.txt", "."))
    )
    install = step(workflow["jobs"]["eval"], "install your app's dependencies")
    assert install["run"].splitlines() == [
        "python -m pip install -r requirements.txt",
        "python -m pip install .",
    ]
    names = [s.get("name") for s in workflow["jobs"]["eval"]["steps"]]
    assert names.index("install ragrail") + 1 == names.index("install your app's dependencies")
    assert "working-directory" not in install  # the project is the repository root


def test_a_python_target_with_nothing_found_fails_until_the_step_is_edited(tmp_path):
    text, workflow = render(BARE_PYTHON)
    install = step(workflow["jobs"]["eval"], "install your app's dependencies")
    said = " ".join(comments(text).replace("#", " ").split())
    assert "EDIT: install your app's dependencies here" in said
    # what ragrail itself would say, so the user recognises it
    assert "cannot import 'mybot.rag' for system.target 'mybot.rag:answer': No module named" in (
        said
    )
    proc = run_step_alone(install, tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == f"::error::{EDIT_NEEDED.format(INSTALL_STEP)}\n"
    # the keys the app reads: a commented example, never a value
    assert "# env:\n    #   OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}" in text


def test_an_http_service_is_started_by_an_edited_step_and_waited_for(tmp_path):
    _, workflow = render(HTTP)
    job = workflow["jobs"]["eval"]
    names = [s.get("name") for s in job["steps"]]
    start, wait = names.index(START_STEP), names.index("wait for localhost:8123")
    assert names.index("install ragrail") < start < wait < names.index("lint the golden set")
    proc = run_step_alone(job["steps"][start], tmp_path)
    assert proc.returncode == 1 and proc.stdout == f"::error::{EDIT_NEEDED.format(START_STEP)}\n"
    assert "/dev/tcp/localhost/8123" in job["steps"][wait]["run"]
    # the variables system.headers reads come from secrets of the same name
    assert job["env"] == {"BOT_TOKEN": "${{ secrets.BOT_TOKEN }}"}


def test_the_wait_step_waits_for_the_port_and_fails_without_a_service(tmp_path):
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        plan = WorkflowPlan(kind="http", url=f"http://127.0.0.1:{port}/ask")
        wait = step(render(plan)[1]["jobs"]["eval"], f"wait for 127.0.0.1:{port}")
        assert run_step_alone(wait, tmp_path).returncode == 0
    fast = wait["run"].replace("seq 60", "seq 2")  # nothing listens now: two tries, then out
    proc = subprocess.run(["bash", "-e", "-c", fast], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert f"::error::nothing listens on 127.0.0.1:{port}" in proc.stdout


def test_a_remote_service_is_only_called():
    _, workflow = render(REMOTE)
    names = [s.get("name") for s in workflow["jobs"]["eval"]["steps"]]
    assert START_STEP not in names and not any(str(n).startswith("wait for") for n in names)
    assert "env" not in workflow["jobs"]["eval"]  # no header reads a variable


def test_an_outputs_file_must_be_committed(tmp_path):
    text, workflow = render(OUTPUTS)
    check = step(workflow["jobs"]["eval"], "check the outputs file is there")
    assert check["env"] == {"OUTPUTS": "answers/outputs.jsonl"}
    proc = subprocess.run(
        ["bash", "-e", "-c", check["run"]],
        cwd=tmp_path,
        env={**os.environ, **check["env"]},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "::error::answers/outputs.jsonl (system.path) is not in the repository" in proc.stdout
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "outputs.jsonl").write_text("{}\n")
    env = {**os.environ, **check["env"]}
    assert subprocess.run(["bash", "-e", "-c", check["run"]], cwd=tmp_path, env=env).returncode == 0
    assert "schedule" not in triggers(workflow)  # a committed file cannot drift on its own
    assert "secrets." not in text.replace("Settings > Secrets", "")


def test_a_pipeline_with_a_real_answerer_runs_it_with_its_key():
    text, workflow = render(CLAUDE_PIPELINE)
    assert list(workflow["jobs"]) == ["eval"]
    assert workflow["jobs"]["eval"]["env"] == {
        "ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"
    }
    assert "answered by anthropic (claude-haiku-9)" in text
    assert triggers(workflow)["schedule"]


@pytest.mark.parametrize(
    "plan", [WorkflowPlan(), CLAUDE_PIPELINE, *OWN.values()], ids=["standin", "claude", *OWN]
)
def test_secrets_appear_only_as_references(plan):
    text = workflow_text(GIT, plan)
    # every mention of a secret is a reference GitHub fills in at run time: no value, no
    # other expression reading one
    assert "secrets." not in SECRET_REF.sub("", text)
    for name, value in _env_values(load(text)):
        assert value == f"${{{{ secrets.{name} }}}}" or "secrets" not in value.lower(), name


def _env_values(node: Any) -> list[tuple[str, str]]:
    """Every (name, value) of every env: mapping in the workflow."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "env" and isinstance(value, dict):
                found += [(k, str(v)) for k, v in value.items()]
            else:
                found += _env_values(value)
    elif isinstance(node, list):
        for item in node:
            found += _env_values(item)
    return found


def test_a_project_in_a_subfolder_runs_there_and_installs_from_the_root():
    plan = WorkflowPlan(
        kind="python", target="bot:answer", folder="evals", installs=("-r requirements.txt",)
    )
    text, workflow = render(plan)
    job = workflow["jobs"]["eval"]
    assert job["defaults"] == {"run": {"working-directory": "evals"}}
    install = step(job, "install your app's dependencies")
    assert install["working-directory"] == "${{ github.workspace }}"
    for cache in (*uses(job, "actions/cache/restore"), *uses(job, "actions/cache/save")):
        assert cache["with"]["path"] == "evals/.ragrail"
        assert "hashFiles('evals/ragrail.toml', 'evals/golden.*')" in cache["with"]["key"]
    (upload,) = uses(job, "actions/upload-artifact")
    assert all(p.startswith("evals/") for p in upload["with"]["path"].split())
    script = uses(job, "actions/github-script")[0]
    assert "readFileSync('evals/summary.md'" in script["with"]["script"]
    assert "hashFiles('evals/summary.md')" in script["if"]
    assert "is in evals/ of this repository" in text

    _, standin = render(WorkflowPlan(folder="evals"))
    assert standin["jobs"]["real-model"]["defaults"] == {"run": {"working-directory": "evals"}}
    (upload,) = uses(standin["jobs"]["real-model"], "actions/upload-artifact")
    assert all(p.startswith("evals/") for p in upload["with"]["path"].split())


# ------------------------------------------------------------------ reading the project


def write_project(folder: Path, system: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ragrail.toml").write_text(f'name = "Bot"\n\n[system]\n{system}\n')
    return folder


def test_the_plan_reads_the_system_and_finds_the_apps_requirements(tmp_path):
    repo = tmp_path / "repo"
    project = write_project(repo / "evals", 'kind = "python"\ntarget = "bot:answer"')
    (repo / ".git").mkdir()
    (repo / "requirements.txt").write_text("llama-index\n")
    (project / "pyproject.toml").write_text('[project]\nname = "bot"\nversion = "1"\n')
    assert repository_root(project) == repo.resolve()
    plan = plan_for(load_config(project / "ragrail.toml"), repo)
    assert (plan.kind, plan.target, plan.folder) == ("python", "bot:answer", "evals")
    assert plan.installs == ("-r requirements.txt", "./evals")

    # tools' settings alone are no package; requirements.txt beside the project is found
    (project / "pyproject.toml").write_text("[tool.ruff]\nline-length = 99\n")
    (project / "requirements.txt").write_text("rank-bm25\n")
    (repo / "requirements.txt").unlink()
    assert app_installs(project.resolve(), repo.resolve()) == ("-r evals/requirements.txt",)
    (project / "requirements.txt").unlink()
    assert app_installs(project.resolve(), repo.resolve()) == ()


def test_the_plan_names_the_secrets_the_headers_read(tmp_path):
    system = (
        'kind = "http"\nurl = "http://localhost:8000/ask"\n'
        'headers = { Authorization = "Bearer ${BOT_TOKEN}", X-Team = "${TEAM}-${BOT_TOKEN}" }'
    )
    plan = plan_for(load_config(write_project(tmp_path, system) / "ragrail.toml"))
    assert plan.secrets == ("BOT_TOKEN", "TEAM") and plan.folder == ""


def test_the_bundled_outputs_example_gets_the_outputs_workflow(tmp_path):
    dest = tmp_path / "lr"
    copy_example("late-refund", dest, GIT)
    workflow = load((dest / ".github" / "workflows" / "evals.yml").read_text())
    assert list(workflow["jobs"]) == ["eval"]
    check = step(workflow["jobs"]["eval"], "check the outputs file is there")
    assert (dest / check["env"]["OUTPUTS"]).is_file()  # committed with the example


# ------------------------------------------------------------------ the command


def test_workflow_writes_the_file_at_the_repository_root_and_says_what_is_left(
    cli, tmp_path, monkeypatch
):
    monkeypatch.setattr(scaffold, "installed_source", lambda: GIT)
    repo = tmp_path / "repo"
    project = write_project(repo / "evals", 'kind = "python"\ntarget = "bot:answer"')
    (repo / ".git").mkdir()
    r = cli("workflow", cwd=project)
    assert r.code == 0, r.err
    written = repo / ".github" / "workflows" / "evals.yml"
    assert r.out.splitlines() == [
        f"Wrote {written} for the python target bot:answer. Before you commit it:",
        f"  - edit the step '{INSTALL_STEP}' (no requirements.txt or pyproject.toml)",
        "  - pass the keys your app reads as secrets (the env marked EDIT)",
    ]
    assert not (project / ".github").exists()
    assert load(written.read_text())["jobs"]["eval"]["defaults"]["run"] == {
        "working-directory": "evals"
    }

    r = cli("workflow", cwd=project)
    assert r.code == 2 and "the workflow exists; --force replaces it" in r.err

    (repo / "requirements.txt").write_text("llama-index\n")
    r = cli("workflow", "--force", "-q", cwd=project)
    assert r.code == 0 and r.out == f"Wrote {written} for the python target bot:answer.\n"
    install = step(load(written.read_text())["jobs"]["eval"], INSTALL_STEP)
    assert install["run"] == "python -m pip install -r requirements.txt\n"

    r = cli("workflow", "-o", "-", cwd=project)
    assert r.code == 0 and load(r.out)["jobs"]["eval"]["steps"]
    assert "Wrote the workflow" in r.err


def test_workflow_never_overwrites_a_project_file(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(scaffold, "installed_source", lambda: GIT)
    project = write_project(tmp_path, 'kind = "outputs"\npath = "outputs.jsonl"')
    before = (project / "ragrail.toml").read_text()
    r = cli("workflow", "--force", "-o", "ragrail.toml", cwd=project)
    assert r.code == 2 and "would overwrite the project file" in r.err
    assert (project / "ragrail.toml").read_text() == before


# ------------------------------------------------------------------ a python target's job, run

APP = """import refundlib


def answer(question):
    return {
        "answer": refundlib.TEXT + " [refunds]",
        "contexts": [{"id": "refunds", "source": "refunds", "text": refundlib.TEXT}],
    }
"""


def test_a_python_targets_job_installs_its_requirements_then_runs(cli, venv, tmp_path, monkeypatch):
    """A repository with its app's library beside it, named in requirements.txt at the root,
    and the project in evals/: the job written by `ragrail workflow` installs it, runs there
    and passes; the app cannot be imported without that install."""
    monkeypatch.setattr(scaffold, "installed_source", lambda: GIT)
    repo = tmp_path / "repo"
    library = repo / "refundlib"
    (library / "refundlib").mkdir(parents=True)
    (library / "refundlib" / "__init__.py").write_text(
        'TEXT = "Ask for a refund within 30 days."\n'
    )
    (library / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "refundlib"\nversion = "1.0"\n'
    )
    (repo / "requirements.txt").write_text("./refundlib\n")
    (repo / ".git").mkdir()
    project = write_project(repo / "evals", 'kind = "python"\ntarget = "bot:answer"')
    (project / "bot.py").write_text(APP)
    (project / "docs").mkdir()
    (project / "docs" / "refunds.md").write_text("# Refunds\n\nAsk for a refund within 30 days.\n")
    case = {
        "id": "window",
        "question": "How long can I ask for a refund?",
        "sources": ["refunds"],
        "facts": ["30 days"],
    }
    (project / "golden.json").write_text(json.dumps([case]))
    assert cli("workflow", cwd=project).code == 0
    workflow = load((repo / ".github" / "workflows" / "evals.yml").read_text())
    assert step(workflow["jobs"]["eval"], INSTALL_STEP)["run"] == (
        "python -m pip install -r requirements.txt\n"
    )

    job = run_job(workflow, "eval", repo, venv)
    assert job.ran() == [
        "install ragrail",
        INSTALL_STEP,
        "lint the golden set",
        "eval (exits 1 on any regression)",
        "summary",
    ], show(job)
    assert all(s.code == 0 for s in job.steps if s.code is not None), show(job)
    results = json.loads((project / "results.json").read_text())
    (trace,) = [c["trace"] for c in results["cases"]]
    assert not trace.get("error") and "30 days" in trace["answer"]
    assert (project / ".ragrail" / "history.sqlite").is_file()  # in the project, as cached

    # the same job without the install: ragrail cannot import the app (exit 2)
    uninstall = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "uninstall", "-y", "refundlib"],
        capture_output=True,
        text=True,
    )
    assert uninstall.returncode == 0, uninstall.stdout + uninstall.stderr
    workflow["jobs"]["eval"]["steps"] = [
        s for s in workflow["jobs"]["eval"]["steps"] if s.get("name") != INSTALL_STEP
    ]
    job = run_job(workflow, "eval", repo, venv)
    assert job.code("eval (exits 1 on any regression)") == 2, show(job)
    assert "No module named 'refundlib'" in show(job)


def test_a_requirements_file_in_the_project_folder_is_installed_from_there(tmp_path):
    """pip reads a requirements file's local paths (``-e .``, ``../lib``) from the folder it
    runs in, not the file's: the project folder's file is installed from the project folder,
    the root's from the root. A stand-in ``python`` on PATH records where each ran."""
    plan = WorkflowPlan(
        kind="python",
        target="bot:answer",
        folder="services/bot",
        installs=("-r requirements.txt", "-r services/bot/requirements.txt", "./services/bot"),
    )
    _, workflow = render(plan)
    install = step(workflow["jobs"]["eval"], INSTALL_STEP)
    assert install["run"].splitlines() == [
        "python -m pip install -r requirements.txt",
        "(cd services/bot && python -m pip install -r requirements.txt)",
        "python -m pip install ./services/bot",
    ]
    repo = tmp_path / "repo"
    (repo / "services" / "bot").mkdir(parents=True)
    stub = tmp_path / "bin"
    stub.mkdir()
    log = tmp_path / "calls.txt"
    (stub / "python").write_text(f'#!/bin/sh\necho "$PWD $*" >> {log}\n')
    (stub / "python").chmod(0o755)
    proc = subprocess.run(
        ["bash", "-e", "-c", install["run"]],
        cwd=repo,  # the step's working-directory: the repository root
        env={"PATH": f"{stub}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == [
        f"{repo} -m pip install -r requirements.txt",
        f"{repo}/services/bot -m pip install -r requirements.txt",
        f"{repo} -m pip install ./services/bot",
    ]


# ------------------------------------------------------------------ a judge


def _env_lines(text: str, job: str) -> list[str]:
    """The env lines of one job as written (PyYAML keeps the last of two equal keys, so
    a key written twice is only seen in the text)."""
    block = text.split(f"\n  {job}:\n", 1)[1].split("\n  # ----", 1)[0]
    block = re.split(r"\n  [a-z-]+:\n", block, maxsplit=1)[0]  # up to the next job
    lines = [ln.strip() for ln in block.splitlines() if SECRET_REF.search(ln)]
    return [ln for ln in lines if not ln.startswith("#")]


JUDGED = {
    "standin": WorkflowPlan(judge="openai", judge_model="gpt-4o-mini"),
    "claude": WorkflowPlan(
        kind="pipeline", answerer="anthropic", model="claude-haiku-9", judge="anthropic"
    ),
    **{
        kind: WorkflowPlan(**{**plan.__dict__, "judge": "openai", "judge_model": "gpt-4o-mini"})
        for kind, plan in OWN.items()
    },
}


@pytest.mark.parametrize("kind", sorted(JUDGED))
def test_a_judge_gets_its_key_in_every_eval_job(kind):
    """[judge] calls a model on every run whatever the system: without its key in the
    job, `ragrail run` stops with exit 2 ("OPENAI_API_KEY is not set") in CI."""
    plan = JUDGED[kind]
    text, workflow = render(plan)
    var = "ANTHROPIC_API_KEY" if plan.judge == "anthropic" else "OPENAI_API_KEY"
    ref = f"${{{{ secrets.{var} }}}}"
    jobs = {"standin": ["offline", "real-model"]}.get(kind, ["eval"])
    assert [j for j in workflow["jobs"] if j != "real-model-key"] == jobs
    for job in jobs:
        assert workflow["jobs"][job]["env"][var] == ref, job
        lines = _env_lines(text, job)
        assert len(lines) == len(set(lines)), f"{job}: a key written twice: {lines}"
    said = " ".join(comments(text).replace("#", " ").split())
    assert f"The judge ([judge]) grades the answers with {plan.judge}" in said
    assert f"with the {var} repository secret" in said
    assert "no keys" not in said  # the stand-in's job is free, the judge is not
    if kind != "claude":  # there the answerer's key is the judge's, asked for once
        assert f"add the {var} repository secret (the judge's key)" in to_do(plan)
    assert "@@" not in text and "secrets." not in SECRET_REF.sub("", text)


def test_without_a_judge_the_stand_in_needs_no_key():
    text, workflow = render(WorkflowPlan())
    assert "env" not in workflow["jobs"]["offline"]
    assert workflow["jobs"]["real-model"]["env"] == {
        "ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"
    }
    assert "The stand-in answerer: deterministic, free, no keys." in text
    assert to_do(WorkflowPlan()) == []


def test_the_plan_reads_the_judge(tmp_path):
    project = write_project(tmp_path, 'kind = "outputs"\npath = "out.jsonl"')
    toml = project / "ragrail.toml"
    toml.write_text(toml.read_text() + '\n[judge]\nprovider = "openai"\nmodel = "gpt-x"\n')
    plan = plan_for(load_config(toml))
    assert (plan.judge, plan.judge_model) == ("openai", "gpt-x")
    bare = write_project(tmp_path / "bare", 'kind = "outputs"\npath = "out.jsonl"')
    assert plan_for(load_config(bare / "ragrail.toml")).judge == ""
