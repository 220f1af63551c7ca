"""The CI workflow (.github/workflows/benchmarks.yml) as a user who copies it into a fresh repository meets it: this
parses it and runs its job, step by step with its environment and conditions, for a fresh repository's first push, a
second push and a pull request, on a real git history with a bare remote as `origin` (no gh-pages branch, an empty
Actions cache). The `run:` steps run as written, in a clone of that remote; the `uses:` steps it cannot run are stood
in for by what they do to the job: actions/checkout clones the remote at the ref, the caches are folders keyed as the
workflow keys them (a miss is a miss), github-action-benchmark reads its data file or fetches gh-pages exactly where
the action would (and fails where it would), upload-artifact checks its paths exist. Made small: a two-row suite on
the tiny preset, in four short rounds, a wide threshold (mechanics here; docs/ci.md measures the real definition's
false alarms and power). The project's own build serves every side (STEPWISE_BUILD_DIR): the commits here differ in
prose only, so ci/build-base.sh finds nothing the build reads changed, as it would for such a change on GitHub; the
base that must be built, and cannot be, is rehearsed too (exit 3, never green)."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "benchmarks.yml"
BUILD = pathlib.Path(os.environ.get("STEPWISE_BUILD_DIR", ROOT / "build"))
SUITE = {
    "name": "ci_small",
    "description": "the workflow test's suite",
    "kind": "cumulative",
    "rows": [{"label": "baseline", "add": []}, {"label": "dynamic mask", "add": ["dynamic_mask"]}],
}
# The gated run made small: four rounds (the fewest the gate judges), four steps a row of 2 x 32 tokens, and like
# ci/gated-run.json it counts what each step dispatches in its first round and goes on, to its next look, while the
# gate at this threshold cannot judge a row.
DEFINITION = {
    "description": "the workflow test's gated run",
    "rounds": 4,
    "max_rounds": 8,
    "threshold": 0.5,
    "threads": 1,
    "args": [
        "--preset=tiny",
        "--device=cpu",
        "--batch-size=2",
        "--seq-len=32",
        "--warmup=1",
        "--min-steps=4",
        "--max-steps=4",
        "--max-time=120",
    ],
    "count_ops": True,
}
ZERO = "0" * 40
DEFAULT_BRANCH = "main"


# --- GitHub's expressions, as far as the workflow uses them ------------------------------------------------------


TOKEN = re.compile(r"\s*(==|!=|&&|\|\||!|\(|\)|,|'(?:[^']|'')*'|[A-Za-z_][\w.-]*(?:\[[^\]]*\])?|\d+)")


def evaluate(expr: str, context: dict):
    """A GitHub Actions expression: literals, context lookups (a name the context lacks is empty, as on GitHub),
    ==, !=, !, && and || (which return an operand, as GitHub's do), parentheses, and the functions the workflow
    calls (hashFiles, format, always, success). An unknown function fails the test: teach it."""
    tokens = TOKEN.findall(expr)
    assert "".join(t.strip() for t in tokens) == re.sub(r"\s+", "", expr) or "'" in expr, f"cannot parse {expr!r}"
    pos = 0

    def peek():
        return tokens[pos].strip() if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1].strip()

    def primary():
        t = take()
        if t == "(":
            v = either()
            assert take() == ")"
            return v
        if t == "!":
            return not truthy(primary())
        if t.startswith("'"):
            return t[1:-1].replace("''", "'")
        if t in ("true", "false"):
            return t == "true"
        if t.isdigit():
            return int(t)
        if peek() == "(":
            take()
            args = []
            while peek() != ")":
                args.append(either())
                if peek() == ",":
                    take()
            take()
            return call(t, args, context)
        return context.get(t, "")

    def equality():
        v = primary()
        while peek() in ("==", "!="):
            op, w = take(), primary()
            same = str(v).lower() == str(w).lower() if isinstance(v, str) or isinstance(w, str) else v == w
            v = same if op == "==" else not same
        return v

    def both():
        v = equality()
        while peek() == "&&":
            take()
            w = equality()
            v = w if truthy(v) else v
        return v

    def either():
        v = both()
        while peek() == "||":
            take()
            w = both()
            v = v if truthy(v) else w
        return v

    value = either()
    assert pos == len(tokens), f"cannot parse {expr!r}"
    return value


def truthy(v) -> bool:
    return bool(v) and v != "false"


def call(name: str, args: list, context: dict):
    if name == "hashFiles":
        return hashlib.sha256(b"".join((context["github.workspace"] / a).read_bytes() for a in args)).hexdigest()
    if name == "format":
        return re.sub(r"\{(\d+)\}", lambda m: str(args[1 + int(m.group(1))]), args[0])
    if name in ("always", "success"):
        return name == "always" or not context.get("job.failed")
    raise AssertionError(f"the test does not know the function {name}(); teach it")


def expand(text: str, context: dict) -> str:
    def value(match):
        v = evaluate(match.group(1), context)
        return str(v).lower() if isinstance(v, bool) else str(v)

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, str(text))


def condition(step: dict, context: dict) -> bool:
    """A step's `if:` (default success()), as GitHub evaluates it."""
    text = str(step.get("if", "success()"))
    text = re.sub(r"^\$\{\{\s*(.*?)\s*\}\}$", r"\1", text.strip())
    ok = truthy(evaluate(text, context))
    return ok and (not context.get("job.failed") or "always()" in text)


# --- the repository, its remote and the runner -------------------------------------------------------------------


def git(cwd: pathlib.Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ID}
    ).stdout.strip()


GIT_ID = {
    "GIT_AUTHOR_NAME": "a user",
    "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "a user",
    "GIT_COMMITTER_EMAIL": "user@example.com",
}


class Repository:
    """A fresh repository made of this project's files (as a user's copy of it would be), with a bare remote."""

    def __init__(self, tmp: pathlib.Path):
        self.origin = tmp / "origin.git"
        self.work = tmp / "work"
        subprocess.run(["git", "init", "-q", "--bare", "-b", DEFAULT_BRANCH, str(self.origin)], check=True)
        files = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
        ).stdout.split(b"\0")
        for name in filter(None, files):
            src, dst = ROOT / name.decode(), self.work / name.decode()
            if src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
        git(self.work, "init", "-q", "-b", DEFAULT_BRANCH)
        git(self.work, "remote", "add", "origin", str(self.origin))
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", "stepwise, copied into a fresh repository")

    def commit(self, message: str, path: str = "docs/notes.md", text: str | None = None) -> str:
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text if text is not None else f"{target.read_text() if target.exists() else ''}{message}\n")
        git(self.work, "add", path)
        git(self.work, "commit", "-q", "-m", message)
        return git(self.work, "rev-parse", "HEAD")

    def push(self, branch: str) -> tuple[str, str]:
        """(the remote's tip before, the new tip), as a push event gives them (all zeros for a new branch)."""
        try:
            before = git(self.origin, "rev-parse", "--verify", "-q", f"refs/heads/{branch}")
        except subprocess.CalledProcessError:
            before = ZERO
        git(self.work, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
        return before, git(self.work, "rev-parse", "HEAD")


class Runner:
    """A runner's job: steps in order, each `run:` in bash with the step's environment, each `uses:` stood in for."""

    def __init__(self, workflow: dict, repo: Repository, tmp: pathlib.Path, cache: pathlib.Path):
        self.workflow, self.repo, self.tmp, self.cache = workflow, repo, tmp, cache
        tmp.mkdir()
        self.workspace = tmp / "checkout"
        definition = tmp / "gated.json"
        suite = tmp / "ci_small.json"
        suite.write_text(json.dumps(SUITE))
        definition.write_text(json.dumps({**DEFINITION, "suites": [str(suite)]}))
        # The runner's environment: the project's build for every side, the small definition.
        self.base_env = {
            **os.environ,
            "STEPWISE_BUILD_DIR": str(BUILD),
            "STEPWISE_GATED_DEFINITION": str(definition),
        }
        self.saves: list[dict] = []  # actions/cache's post-step saves, made when the job succeeded

    def step(self, step: dict, scope: dict, env: dict) -> tuple[bool, str]:
        uses = step.get("uses", "")
        # Inputs reach an action as strings (YAML's true is 'true').
        spec = {k: expand(str(v).lower() if isinstance(v, bool) else v, scope) for k, v in step.get("with", {}).items()}
        if "run" in step:
            outputs = self.tmp / f"output-{step.get('id', 'step')}"
            outputs.write_text("")
            step_env = {**env, **{k: expand(v, scope) for k, v in step.get("env", {}).items()}}
            run = subprocess.run(
                ["bash", "-eo", "pipefail", "-c", expand(step["run"], scope)],
                cwd=self.workspace,
                capture_output=True,
                text=True,
                timeout=1800,  # a hang guard only
                env={**step_env, "GITHUB_OUTPUT": str(outputs), "GITHUB_REF_NAME": scope.get("github.ref_name", "")},
            )
            if "id" in step:
                for line in outputs.read_text().splitlines():
                    key, value = line.split("=", 1)
                    scope[f"steps.{step['id']}.outputs.{key}"] = value
            return run.returncode == 0, f"(exit {run.returncode})\n{run.stdout}{run.stderr}"
        if uses.startswith("actions/checkout"):
            git(self.tmp, "clone", "-q", str(self.repo.origin), str(self.workspace))
            git(self.workspace, "checkout", "-q", "--detach", spec["ref"])
            return True, f"checked out {spec['ref']}"
        if uses.startswith(("actions/cache/restore", "actions/cache@")):
            hit = self.restore(spec)
            if not uses.startswith("actions/cache/restore"):
                self.saves.append(spec)
            return True, f"cache {'hit ' + hit if hit else 'miss'}"
        if uses.startswith("actions/cache/save"):
            self.save(spec)
            return True, "saved"
        if uses.startswith("benchmark-action/github-action-benchmark"):
            return benchmark_action(self.workspace, spec, scope)
        if uses.startswith("actions/upload-artifact"):
            # if-no-files-found defaults to warn: a job that stopped early still uploads what it has.
            found = [p for p in spec["path"].split() if (self.workspace / p).exists()]
            return True, f"uploaded {found}"
        raise AssertionError(f"the test does not know the action {uses}; teach it what it does")

    def restore(self, spec: dict) -> str | None:
        """actions/cache's restore: the exact key, else the newest entry whose key starts with a restore key."""
        key = spec["key"]
        prefixes = [p for p in spec.get("restore-keys", "").split("\n") if p.strip()]
        entries = sorted(self.cache.glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
        hit = next((p for p in entries if p.name == key), None) or next(
            (p for p in entries for prefix in prefixes if p.name.startswith(prefix.strip())), None
        )
        if hit is None:
            return None
        paths = [p for p in spec["path"].split("\n") if p.strip()]
        for path in paths:
            source = hit / _slug(path)
            if source.exists():
                shutil.copytree(source, self._where(path), dirs_exist_ok=True)
        return hit.name

    def save(self, spec: dict) -> None:
        """actions/cache's save: a key is written once; a path that does not exist is skipped."""
        target = self.cache / spec["key"]
        if target.exists():
            return
        for path in (p for p in spec["path"].split("\n") if p.strip()):
            source = self._where(path)
            if source.exists():
                shutil.copytree(source, target / _slug(path))
        target.mkdir(exist_ok=True)

    def _where(self, path: str) -> pathlib.Path:
        path = path.strip()
        if path.startswith("~/"):
            return self.tmp / "home" / path[2:]  # the runner's home: not this machine's caches
        return self.workspace / path


def _slug(path: str) -> str:
    return re.sub(r"[^\w.-]", "_", path.strip())


def benchmark_action(workspace: pathlib.Path, spec: dict, scope: dict) -> tuple[bool, str]:
    """github-action-benchmark v1 (src/write.ts), as far as the workflow uses it: the output file in its tool's
    format, then either the external data file (read, or the empty default when missing; the new entry appended;
    written when save-data-file) or, without one, `git fetch origin gh-pages:gh-pages` and a commit to it, pushed with
    auto-push. A missing gh-pages fails as the action fails."""
    entries = json.loads((workspace / spec["output-file-path"]).read_text())
    assert spec["tool"] == "customSmallerIsBetter"
    assert entries and all({"name", "unit", "value"} <= set(e) for e in entries), entries
    bench = {"commit": {"id": scope["github.sha"]}, "tool": spec["tool"], "benches": entries}
    external = spec.get("external-data-json-path")
    if external:
        assert spec.get("auto-push", "false") == "false", "auto-push must be false with external-data-json-path"
        path = workspace / external
        data = json.loads(path.read_text()) if path.exists() else {"entries": {}}
        data["entries"].setdefault(spec["name"], []).append(bench)
        if spec.get("save-data-file", "true") == "true":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data))
        return True, f"{len(data['entries'][spec['name']])} entries in {external}"
    fetch = subprocess.run(
        ["git", "fetch", "origin", "gh-pages:gh-pages"], cwd=workspace, capture_output=True, text=True
    )
    if fetch.returncode:
        return False, f"Command 'git fetch origin gh-pages:gh-pages' failed: {fetch.stderr}"
    git(workspace, "switch", "-q", "gh-pages")
    data_js = workspace / "dev" / "bench" / "data.js"
    data_js.parent.mkdir(parents=True, exist_ok=True)
    data_js.write_text(f"window.BENCHMARK_DATA = {json.dumps(bench)}")
    git(workspace, "add", "dev/bench/data.js")
    git(workspace, "commit", "-q", "-m", f"add {spec['name']} benchmark result")
    if spec.get("auto-push") == "true":
        git(workspace, "push", "-q", "origin", "gh-pages:gh-pages")
    git(workspace, "checkout", "-q", "-")
    return True, "committed to gh-pages"


# --- the rehearsal ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def gate_of(record: dict) -> dict:
    return json.loads((record["context"]["github.workspace"] / "ci-compare.json").read_text())


def run_job(runner: Runner, event: str, github: dict, variables: dict | None = None) -> dict:
    """One job of the workflow for one event: every step whose `if:` holds, in order; a failing step ends the job
    unless it may fail (continue-on-error); what each step printed, which failed, and the job's context."""
    (job,) = runner.workflow["jobs"].values()
    context = {
        "github.event_name": event,
        "github.workspace": runner.workspace,
        "github.run_id": str(len(list(runner.cache.glob("*"))) + 1),
        "github.event.repository.default_branch": DEFAULT_BRANCH,
        "runner.os": "Linux",
        "secrets.GITHUB_TOKEN": "a-token",
        **{f"github.{k}": v for k, v in github.items()},
        **{f"vars.{k}": v for k, v in (variables or {}).items()},
    }
    env = dict(runner.base_env)
    for k, v in {**runner.workflow.get("env", {}), **job.get("env", {})}.items():
        env[k] = expand(v, {**context, **{f"env.{a}": b for a, b in env.items()}})
    record = {"ran": [], "failed": [], "logs": {}, "context": context, "env": env}
    for step in job["steps"]:
        scope = {**context, **{f"env.{a}": b for a, b in env.items()}}
        name = step.get("name", step.get("uses", "?"))
        if not condition(step, scope):
            continue
        ok, log = runner.step(step, scope, env)
        context.update({k: v for k, v in scope.items() if k.startswith("steps.")})
        record["ran"].append(name)
        record["logs"][name] = log
        if not ok:
            record["failed"].append(name)
            if not step.get("continue-on-error"):
                context["job.failed"] = True
    if not context.get("job.failed"):
        for spec in runner.saves:
            runner.save(spec)
    record["failed_job"] = bool(context.get("job.failed"))
    return record


PUBLISH = "Publish to github-action-benchmark"
GATE = "Gate against the base"


def push_event(before: str, sha: str, branch: str = DEFAULT_BRANCH) -> dict:
    return {"sha": sha, "ref": f"refs/heads/{branch}", "ref_name": branch, "event.before": before}


def assert_judged_against(record: dict, base: str, why: str) -> dict:
    """The job ran through the gate, against `base`, and passed with a verdict; the gate's JSON."""
    assert not record["failed_job"] and not record["failed"], {k: record["logs"][k][-3000:] for k in record["failed"]}
    assert record["context"]["steps.base.outputs.sha"] == base
    assert why in record["context"]["steps.base.outputs.why"]
    verdict = gate_of(record)
    assert verdict["gate"]["exit_code"] == 0 and verdict["gate"]["verdict"] == "PASS", verdict["gate"]
    # Both sides measured in this job, interleaved row by row, judged as the run stopped (threshold, both parts).
    assert verdict["settings"]["threshold"] == DEFINITION["threshold"] and verdict["settings"]["gate"] == "both"
    assert any("interleaved row by row" in n for n in verdict["notes"])
    assert verdict["absolute"] and all(r["measure"] == "cpu_ms" for r in verdict["absolute"] if r.get("measure"))
    assert [r["verdict"] for r in verdict["work"]] == ["SAME"] * len(SUITE["rows"]), verdict["work"]
    return verdict


def test_a_fresh_repository_is_gated_from_its_first_push_then_every_push_and_pull_request(workflow, tmp_path):
    repo = Repository(tmp_path / "repo")
    cache = tmp_path / "actions-cache"
    cache.mkdir()

    # The first push of a fresh repository: no gh-pages, an empty cache, a root commit with nothing before it. It is
    # gated against itself (a same-commit pair: the gate passes an unchanged step on this runner) and the dashboard's
    # history starts in the cache.
    before, first = repo.push(DEFAULT_BRANCH)
    assert before == ZERO
    one = run_job(Runner(workflow, repo, tmp_path / "push1", cache), "push", push_event(before, first))
    assert_judged_against(one, first, "no parent")
    assert PUBLISH in one["ran"] and "1 entries" in one["logs"][PUBLISH]
    fingerprint = one["context"]["steps.runner.outputs.fingerprint"]
    assert re.fullmatch(r"[0-9a-f]{12}", fingerprint)
    assert any(p.name.startswith(f"stepwise-history-{fingerprint}-") for p in cache.iterdir())
    assert "Make the gh-pages branch" not in one["ran"]  # Pages off: the branch is never needed

    # The second push, with Pages turned on: gated against the tip it replaced; gh-pages made, then published to.
    second = repo.commit("the second push: a note")
    before, tip = repo.push(DEFAULT_BRANCH)
    assert (before, tip) == (first, second)
    two = run_job(
        Runner(workflow, repo, tmp_path / "push2", cache),
        "push",
        push_event(before, tip),
        {"STEPWISE_PAGES": "true"},
    )
    assert_judged_against(two, first, "github.event.before")
    assert {"Make the gh-pages branch", "Publish to GitHub Pages"} <= set(two["ran"]) and PUBLISH not in two["ran"]
    assert "dev/bench/data.js" in git(repo.origin, "ls-tree", "-r", "--name-only", "gh-pages")

    # A pull request from a branch with its own commit: gated against its merge base with main, not main's history.
    git(repo.work, "switch", "-q", "-c", "feature")
    head = repo.commit("a pull request's change: a note")
    repo.push("feature")
    pr = {
        "sha": "f" * 40,  # GitHub's merge commit, which the workflow does not check out
        "ref": "refs/pull/1/merge",
        "ref_name": "1/merge",
        "event.pull_request.base.sha": second,
        "event.pull_request.head.sha": head,
    }
    three = run_job(Runner(workflow, repo, tmp_path / "pr", cache), "pull_request", pr)
    assert_judged_against(three, second, "merge base")
    assert git(three["context"]["github.workspace"], "rev-parse", "HEAD") == head
    assert "Save the dashboards' history" not in three["ran"]  # a pull request never writes main's history


def test_a_base_that_cannot_be_built_is_said_and_exits_3_never_green(workflow, tmp_path):
    # The commit a pull request starts from does not build (here its build script fails at once): the job stops at
    # the base's build with exit 3, saying why and how to get past it once; nothing is measured or published.
    repo = Repository(tmp_path / "repo")
    cache = tmp_path / "actions-cache"
    cache.mkdir()
    broken = repo.commit("break the build", "scripts/build.sh", "#!/usr/bin/env bash\necho 'no build' >&2\nexit 1\n")
    os.chmod(repo.work / "scripts" / "build.sh", 0o755)
    git(repo.work, "commit", "-q", "--amend", "-a", "--no-edit")
    broken = git(repo.work, "rev-parse", "HEAD")
    repo.push(DEFAULT_BRANCH)
    git(repo.work, "switch", "-q", "-c", "fix")
    git(repo.work, "checkout", "-q", f"{broken}~1", "--", "scripts/build.sh")
    git(repo.work, "commit", "-q", "-m", "fix the build")
    head = git(repo.work, "rev-parse", "HEAD")
    repo.push("fix")
    pr = {
        "sha": "f" * 40,
        "ref": "refs/pull/2/merge",
        "ref_name": "2/merge",
        "event.pull_request.base.sha": broken,
        "event.pull_request.head.sha": head,
    }
    record = run_job(Runner(workflow, repo, tmp_path / "pr", cache), "pull_request", pr)
    assert record["failed_job"] and record["failed"] == ["Build the base"], record["failed"]
    log = record["logs"]["Build the base"]
    assert "(exit 3)" in log and "not judged" in log and "Stepwise-Base:" in log, log[-2000:]
    assert GATE not in record["ran"] and PUBLISH not in record["ran"]
    assert any(name.startswith("actions/upload-artifact") for name in record["ran"])  # what it has still goes up
