#!/usr/bin/env python3
"""Checks the GitHub Actions workflow templates (tools/ci/workflows/*.yml) without GitHub.

    tools/ci/check-workflows.py [DIR]      (default: tools/ci/workflows beside this file)

Each file must parse as YAML and have the shape Actions accepts (on, jobs; each job runs-on and
steps; each step exactly one of run/uses, an action pinned to a version). Beyond the shape, the
rules this project's gate depends on (docs/ci.md, docs/gates.md "Threat model"):

- no `pull_request_target` trigger (it runs with the base branch's token: a PR's code checked out
  there is the "pwn request" hole);
- top-level `permissions` declared; a workflow triggered by `pull_request` asks for no write scope;
- no `${{ ... }}` expression inside a `run:` script (values reach scripts through `env:`, so a
  branch name or title cannot inject shell);
- every `tools/ci/<script>` a step runs exists in the checkout and is executable;
- a job that runs tools/ci/pr-gate.sh checks out with fetch-depth 0 (the gate needs the merge-base);
- a `workflow_run` workflow never checks out another ref than its default branch's (no `ref:`);
- the nightly's shard matrix is exactly 0 .. SHARD_COUNT-1 (a shard missing from the matrix would
  never run).

Prints one line per problem ("FILE: where: what") and exits 1 when there is one, 0 otherwise;
3 when PyYAML is missing.
"""
import os
import re
import sys

try:
    import yaml
except ImportError:  # Debian: python3-yaml (tools/install-deps.sh)
    print("check-workflows: PyYAML is not installed (python3-yaml)", file=sys.stderr)
    sys.exit(3)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVENTS = {"pull_request", "pull_request_target", "push", "schedule", "workflow_dispatch", "workflow_run",
          "workflow_call", "merge_group", "release"}
JOB_KEYS = {"name", "runs-on", "steps", "needs", "if", "permissions", "env", "strategy", "timeout-minutes",
            "concurrency", "environment", "outputs", "defaults", "continue-on-error", "container", "services"}
STEP_KEYS = {"name", "id", "uses", "run", "with", "env", "if", "shell", "working-directory", "continue-on-error",
             "timeout-minutes"}


def triggers(doc):
    # YAML 1.1 reads a bare `on` key as the boolean true.
    on = doc.get("on", doc.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {e: None for e in on}
    return on if isinstance(on, dict) else {}


def writes(perms):
    if perms == "write-all":
        return True
    return isinstance(perms, dict) and any(v == "write" for v in perms.values())


def check_file(path):
    problems = []
    name = os.path.relpath(path, ROOT)

    def bad(where, what):
        problems.append(f"{name}: {where}: {what}")

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except yaml.YAMLError as e:
        return [f"{name}: does not parse as YAML: {e}"]
    if not isinstance(doc, dict):
        return [f"{name}: not a mapping"]
    on = triggers(doc)
    if not on:
        bad("on", "no trigger")
    for event in on:
        if event not in EVENTS:
            bad("on", f"unknown event {event!r}")
    if "pull_request_target" in on:
        bad("on", "pull_request_target runs with the base branch's token; measure under pull_request")
    if "permissions" not in doc:
        bad("permissions", "not declared (the token's default scope is the repository's setting)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        bad("jobs", "no jobs")
        return problems
    env = doc.get("env") or {}
    for job_id, job in jobs.items():
        where = f"jobs.{job_id}"
        if not isinstance(job, dict):
            bad(where, "not a mapping")
            continue
        for k in job:
            if k not in JOB_KEYS:
                bad(where, f"unknown key {k!r}")
        if "runs-on" not in job:
            bad(where, "no runs-on")
        if "pull_request" in on and (writes(doc.get("permissions")) or writes(job.get("permissions"))):
            bad(where, "a pull_request job runs the PR's code: it must not hold a write scope")
        for need in [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs") or []:
            if need not in jobs:
                bad(where, f"needs unknown job {need!r}")
        steps = job.get("steps")
        if not isinstance(steps, list) or not steps:
            bad(where, "no steps")
            continue
        runs_pr_gate = any("tools/ci/pr-gate.sh" in str(s.get("run", "")) for s in steps if isinstance(s, dict))
        for i, step in enumerate(steps):
            sw = f"{where}.steps[{i}]"
            if not isinstance(step, dict):
                bad(sw, "not a mapping")
                continue
            for k in step:
                if k not in STEP_KEYS:
                    bad(sw, f"unknown key {k!r}")
            if ("run" in step) == ("uses" in step):
                bad(sw, "needs exactly one of run and uses")
            uses = step.get("uses", "")
            if uses and not re.fullmatch(r"[\w.-]+/[\w./-]+@[\w.-]+", uses):
                bad(sw, f"action {uses!r} not pinned to a version (owner/name@ref)")
            with_ = step.get("with") or {}
            if uses.startswith("actions/checkout@"):
                if runs_pr_gate and str(with_.get("fetch-depth")) != "0":
                    bad(sw, "the gate needs the merge-base: check out with fetch-depth: 0")
                if "workflow_run" in on and "ref" in with_:
                    bad(sw, "a workflow_run job checks out its default branch only (no ref: the PR's code must not run here)")
            run = step.get("run")
            if run is None:
                continue
            if "${{" in str(run):
                bad(sw, "a ${{ }} expression inside run: (pass it through env:)")
            for script in re.findall(r"tools/ci/[\w.-]+", str(run)):
                p = os.path.join(ROOT, script)
                if not os.path.isfile(p):
                    bad(sw, f"{script} does not exist")
                elif not os.access(p, os.X_OK):
                    bad(sw, f"{script} is not executable")
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        if "shard" in matrix:
            count = env.get("SHARD_COUNT")
            if not isinstance(count, int) or matrix["shard"] != list(range(count)):
                bad(f"{where}.strategy.matrix.shard", f"{matrix['shard']} is not 0 .. SHARD_COUNT-1 (SHARD_COUNT {count})")
    return problems


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tools", "ci", "workflows")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith((".yml", ".yaml")))
    if not files:
        print(f"check-workflows: no workflow files in {folder}", file=sys.stderr)
        return 1
    problems = [p for f in files for p in check_file(f)]
    for p in problems:
        print(p)
    print(f"check-workflows: {len(files)} file(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
