"""What the workflow says and does for each kind of system under test.

Each function gives the lines of one block of ``templates/evals.yml`` (unindented: the
block's marker says where they go). The built-in pipeline with the stand-in replaces none:
the template is its workflow. Any other system calls something of its own (a model, your
app, your service) or nothing at all (an outputs file), so its job is the real run and no
``--claude`` job is written; what it needs first (dependencies, a running service, a
committed file, keys as secrets) is a step or a comment, and what only the user can know
is a step marked ``EDIT`` that fails the job until it is edited, never a run that fails
later for a reason it does not name.
"""

from __future__ import annotations

import json
import shlex
import textwrap
from urllib.parse import urlsplit

from ragrail.scaffold.plan import WorkflowPlan

WIDTH = 92  # the template's comments end by this column
CRON = '  - cron: "17 5 * * 1"'
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
INSTALL_STEP = "install your app's dependencies"
START_STEP = "start the service"


def say(text: str, indent: int) -> list[str]:
    """``text`` as ``# `` comment lines ending by column :data:`WIDTH` at ``indent``."""
    width = WIDTH - indent - 2
    return [f"# {line}" for line in textwrap.wrap(text, width, break_on_hyphens=False)]


def secret_env(names: tuple[str, ...] | list[str]) -> list[str]:
    """An ``env:`` mapping each variable to the repository secret of the same name: a
    reference GitHub fills in at run time, never a value."""
    return ["env:", *(f"  {name}: ${{{{ secrets.{name} }}}}" for name in names)]


def key_var(plan: WorkflowPlan) -> str:
    """The environment variable the pipeline's answerer reads its API key from."""
    from ragrail.calls.providers import KEY_VARS

    return KEY_VARS.get(plan.answerer, f"{plan.answerer.upper()}_API_KEY")


def judge_var(plan: WorkflowPlan) -> str:
    """The environment variable the judge reads its API key from; "" without a judge."""
    from ragrail.calls.providers import KEY_VARS

    return KEY_VARS.get(plan.judge, f"{plan.judge.upper()}_API_KEY") if plan.judge else ""


def judge_says(plan: WorkflowPlan) -> str:
    """The judge in one sentence, for the comments; "" without one. It calls a model on
    every run whatever the system, so the job needs its key even for the stand-in."""
    from ragrail.calls.providers import DEFAULT_MODELS
    from ragrail.text.guard import visible

    if not plan.judge:
        return ""
    model = plan.judge_model or DEFAULT_MODELS.get(plan.judge)
    named = f"{plan.judge} ({visible(model)})" if model else plan.judge
    return (
        f"The judge ([judge]) grades the answers with {named}, with the {judge_var(plan)} "
        "repository secret."
    )


def local_port(plan: WorkflowPlan) -> tuple[str, int] | None:
    """``(host, port)`` of an http system the job must start itself (a local address);
    None for a service elsewhere, which the job can only call."""
    parts = urlsplit(plan.url)
    host = parts.hostname or ""
    if host not in LOCAL_HOSTS and not host.endswith(".localhost"):
        return None
    try:
        port = parts.port
    except ValueError:
        port = None
    return host, port or (443 if parts.scheme == "https" else 80)


def system_name(plan: WorkflowPlan) -> str:
    """The system in a few words: "the python target mybot.rag:answer"."""
    from ragrail.text.guard import visible

    return {
        "python": f"the python target {visible(plan.target)}",
        "http": f"the service at {visible(plan.url)}",
        "outputs": f"the outputs file {visible(plan.outputs)}",
    }.get(plan.kind, f"the built-in pipeline answered by {plan.answerer}")


def describe(plan: WorkflowPlan) -> str:
    """The system under test in words, for the file's header, and the judge when there
    is one."""
    judge = judge_says(plan)
    return f"{_system_words(plan)} {judge}" if judge else _system_words(plan)


def _system_words(plan: WorkflowPlan) -> str:
    from ragrail.calls.providers import DEFAULT_MODELS
    from ragrail.text.guard import visible

    if plan.offline:
        return "the built-in pipeline over the documents, answered by the offline stand-in."
    if plan.kind == "python":
        return (
            f"your Python function {visible(plan.target)}, imported from the project folder "
            "and called once per question. It runs as your app does, with the models and "
            "indexes it uses, so the job installs the app's dependencies first and passes it "
            "the keys it reads."
        )
    if plan.kind == "http":
        where = (
            "The job starts it (the step marked EDIT) and waits for its port."
            if local_port(plan)
            else "It must be reachable from GitHub's runners, and it answers with the code "
            "deployed there, not this pull request's, unless a step before the eval deploys it."
        )
        return (
            f"your service at {visible(plan.url)}: ragrail POSTs each question to it, so it "
            f"must be up when the eval starts. {where}"
        )
    if plan.kind == "outputs":
        return (
            f"the answers already in {visible(plan.outputs)}: ragrail scores that file and "
            f"calls nothing{' of yours' if plan.judge else ''}, so the file must be in the repository when the job runs. After "
            "changing your app, answer the golden set with it again and commit the new file "
            "with the change (or produce it in a step before the eval)."
        )
    model = plan.model or DEFAULT_MODELS.get(plan.answerer)
    named = f"{plan.answerer} ({visible(model)})" if model else plan.answerer
    return (
        f"the built-in pipeline over the documents, answered by {named}: every run calls the "
        f"model, with the {key_var(plan)} repository secret (Settings > Secrets and variables "
        "> Actions). Questions unchanged since the last run are answered from the reply "
        "cache in .ragrail/."
    )


def job_about(plan: WorkflowPlan) -> str:
    """The one job's own comment: what it runs, and why there is no real-model job."""
    if plan.offline:
        return f"The stand-in answerer: deterministic and free. {judge_says(plan)}".strip()
    real = "so this job is the real run and there is no separate real-model job"
    about = {
        "python": f"Your app, called in-process (system.target). It calls its own models, {real}.",
        "http": f"Your service, over HTTP (system.url). It calls its own models, {real}.",
        "outputs": "The outputs file, scored as it is: nothing is called, so no keys and no "
        "real-model job."
        if not plan.judge
        else "The outputs file, scored as it is: your app is not called, so no real-model job.",
    }.get(plan.kind, f"The built-in pipeline answered by {plan.answerer}, {real}.")
    judge = judge_says(plan)
    return f"{about} {judge}" if judge else about


def job_settings(plan: WorkflowPlan) -> list[str]:
    """The job's environment: the secrets the system and the judge read, or where to add
    them."""
    judge = [judge_var(plan)] if plan.judge else []
    if plan.kind == "pipeline":
        own = [] if plan.offline else [key_var(plan)]
        names = list(dict.fromkeys([*own, *judge]))
        return secret_env(names) if names else []
    if plan.kind == "python":
        edit = (
            "EDIT: the keys your app reads (its model's API key...), as repository secrets "
            "(Settings > Secrets and variables > Actions) in its environment, for example:"
        )
        if not judge:
            return [*say(edit, 4), "# env:", "#   OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}"]
        example = "ANTHROPIC_API_KEY" if judge[0] == "OPENAI_API_KEY" else "OPENAI_API_KEY"
        edit = edit.replace("in its environment", "in this env, beside the judge's")
        return [*say(edit, 4), *secret_env(judge), f"  # {example}: ${{{{ secrets.{example} }}}}"]
    if plan.kind == "http" and (plan.secrets or judge):
        note = "The variables system.headers reads (${NAME}): add each as a repository secret."
        if not plan.secrets:
            note = "The judge's key: add it as a repository secret."
        elif judge:
            note = note.replace("(${NAME})", "(${NAME}) and the judge's key")
        return [*say(note, 4), *secret_env(list(dict.fromkeys([*plan.secrets, *judge])))]
    if judge:
        return [*say("The judge's key: add it as a repository secret.", 4), *secret_env(judge)]
    return []


def fail_until_edited(what: str) -> list[str]:
    """A ``run:`` that fails the job, naming the step to edit, until the user replaces it."""
    message = f"edit the step '{what}' in .github/workflows/evals.yml (marked EDIT)"
    return ["run: |", f'  echo "::error::{message}"', "  exit 1"]


def pip_line(arg: str) -> str:
    """The shell line installing one of :attr:`WorkflowPlan.installs`, from the repository
    root. A requirements file in a subfolder is installed from its own folder: pip reads
    the local paths in it (``-e .``, ``../lib``) from the folder it runs in, so from the
    root they would name the wrong project, or none."""
    parts = shlex.split(arg)
    if len(parts) == 2 and parts[0] == "-r" and "/" in parts[1]:
        folder, name = parts[1].rsplit("/", 1)
        return f"(cd {shlex.quote(folder)} && python -m pip install -r {shlex.quote(name)})"
    return f"python -m pip install {arg}"


def install_steps(plan: WorkflowPlan) -> list[str]:
    """The python system's dependencies, from the repository root: what was found, else
    a step to edit that fails until it is edited."""
    from ragrail.text.guard import visible

    head = [f"- name: {INSTALL_STEP}"]
    if plan.installs:
        found = (
            "Found at the repository root and beside ragrail.toml: each requirements.txt "
            "(installed from its own folder, which its local paths are relative to), and each "
            "pyproject.toml's project with its dependencies. Edit to fit (extras, a lock file, "
            "a private index)."
        )
        body = [*say(found, 8), "run: |"]
        body += [f"  {pip_line(visible(arg))}" for arg in plan.installs]
    else:
        target = visible(plan.target)
        module = target.partition(":")[0]
        missing = (
            "EDIT: install your app's dependencies here (pip install -r requirements.txt, "
            "pip install -e ., ...). No requirements.txt, nor a pyproject.toml with a project, "
            "was found beside ragrail.toml or at the repository root. Left as it is, this step "
            'fails the job; without it ragrail would stop with exit 2: "cannot import '
            f"'{module}' for system.target '{target}': No module named ...\". An app that "
            "needs nothing beyond ragrail and the standard library: delete this step."
        )
        body = [*say(missing, 8), *fail_until_edited(INSTALL_STEP)]
    if plan.folder:  # the paths are from the repository root, not the job's folder
        body.append("working-directory: ${{ github.workspace }}")
    return head + [f"  {line}" for line in body]


def service_steps(plan: WorkflowPlan) -> list[str]:
    """Start a local http system (a step to edit) and wait for its port."""
    found = local_port(plan)
    if found is None:
        return []
    host, port = found
    start = (
        "EDIT: start your service here, in the background, after installing what it needs. "
        "Give it the keys it reads as repository secrets in an env: on this step "
        "(OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}). Left as it is, this step fails "
        'the job; without it every question would be an ERROR, "connection failed" '
        "(exit 3). For example:"
    )
    example = [
        "#   python -m pip install -r requirements.txt",
        f"#   nohup uvicorn myapp.api:app --port {port} > service.log 2>&1 &",
    ]
    wait = [
        f"- name: wait for {host}:{port}",
        "  # up to 60 seconds for the service to listen; then the eval starts",
        "  run: |",
        "    for _ in $(seq 60); do",
        f"      if (exec 3<>/dev/tcp/{host}/{port}) 2>/dev/null; then exit 0; fi",
        "      sleep 1",
        "    done",
        f"    echo \"::error::nothing listens on {host}:{port} after 60 s: see '{START_STEP}'\"",
        "    exit 1",
    ]
    body = [*say(start, 8), *example, *fail_until_edited(START_STEP)]
    return [f"- name: {START_STEP}", *(f"  {line}" for line in body), *wait]


def outputs_steps(plan: WorkflowPlan) -> list[str]:
    """Say that the outputs file must be committed or produced, and check it is there."""
    from ragrail.text.guard import visible

    produce = (
        "To produce the outputs file here instead of committing it, add a step that runs "
        "your app over the golden set, for example:"
    )
    return [
        *say(produce, 6),
        "# - name: answer the golden set",
        f"#   run: python answer_golden.py > {shlex.quote(visible(plan.outputs))}",
        "- name: check the outputs file is there",
        "  env:",
        f"    OUTPUTS: {json.dumps(plan.outputs)}",
        "  run: |",
        '    if [ ! -f "$OUTPUTS" ]; then',
        '      echo "::error::$OUTPUTS (system.path) is not in the repository: commit your '
        "app's answers to the golden set, or produce them in a step before this one\"",
        "      exit 1",
        "    fi",
    ]


def triggers(plan: WorkflowPlan) -> list[str]:
    """Pull requests, and a weekly run where something the system calls can drift."""
    lines = ["pull_request:", "  types: [opened, synchronize, reopened]"]
    if plan.kind == "outputs":
        return [*lines, "# no schedule: a committed outputs file cannot drift on its own"]
    drift = (
        "Mondays: the same eval with nothing changed, so drift in what the system calls (a "
        "model, an index, a service) shows up without a pull request"
    )
    return [*lines, *say(drift, 2), "schedule:", CRON]


def shard_note(plan: WorkflowPlan) -> list[str]:
    """What the commented shard job needs besides ragrail, for this system and judge."""
    job = "offline" if plan.offline else "eval"
    needs = []
    if job_settings(plan) and any(line.startswith("env:") for line in job_settings(plan)):
        needs.append(f"the {job} job's env (its keys)")
    elif plan.kind == "python":
        needs.append(f"the {job} job's env (your app's keys)")
    if plan.kind == "python":
        needs.append(f'its step "{INSTALL_STEP}"')
    if plan.kind == "http" and local_port(plan):
        needs.append(f'its steps "{START_STEP}" and "wait for ..."')
    if not needs:
        return []
    return say(f"Each shard job also needs {' and '.join(needs)}, after installing ragrail.", 2)


def system_blocks(plan: WorkflowPlan) -> dict[str, list[str]]:
    """The blocks that fit the template to ``plan``'s system: none for the stand-in
    without a judge; with one, its key in both jobs and its words in the comments."""
    if plan.offline:
        return judge_blocks(plan) if plan.judge else {}
    steps = {"python": install_steps, "http": service_steps, "outputs": outputs_steps}
    make_steps = steps.get(plan.kind)
    return {
        "about": say(
            f"The system under test, as ragrail.toml's [system] says: {describe(plan)}", 0
        ),
        "triggers": triggers(plan),
        "job-about": say(job_about(plan), 4),
        "job-settings": job_settings(plan),
        "system-steps": make_steps(plan) if make_steps else [],
        "real-model": [],
        "shard-note": shard_note(plan),
    }


def judge_blocks(plan: WorkflowPlan) -> dict[str, list[str]]:
    """The stand-in's workflow with a judge: the offline job calls the judge's model, so
    it gets the key; the real-model job already has ANTHROPIC_API_KEY, and gets another
    judge's key beside it."""
    var = judge_var(plan)
    return {
        "about": say(
            f"The system under test, as ragrail.toml's [system] says: {describe(plan)}", 0
        ),
        "job-about": say(job_about(plan), 4),
        "job-settings": job_settings(plan),
        "real-model-env": []
        if var == "ANTHROPIC_API_KEY"
        else [f"{var}: ${{{{ secrets.{var} }}}}"],
        "shard-note": shard_note(plan),
    }


def to_do(plan: WorkflowPlan) -> list[str]:
    """What the user still has to do before the workflow can pass, one line each."""
    from ragrail.text.guard import visible

    todo = []
    if plan.kind == "pipeline" and not plan.offline:
        todo.append(f"add the {key_var(plan)} repository secret")
    if plan.kind == "python":
        if not plan.installs:
            todo.append(f"edit the step '{INSTALL_STEP}' (no requirements.txt or pyproject.toml)")
        todo.append("pass the keys your app reads as secrets (the env marked EDIT)")
    if plan.kind == "http":
        if local_port(plan):
            todo.append(f"edit the step '{START_STEP}'")
        todo += [f"add the {name} repository secret" for name in plan.secrets]
    if plan.kind == "outputs":
        todo.append(f"commit {visible(plan.outputs)} with each change to your app")
    var = judge_var(plan)
    if var and not (plan.kind == "pipeline" and not plan.offline and var == key_var(plan)):
        todo.append(f"add the {var} repository secret (the judge's key)")
    return todo
