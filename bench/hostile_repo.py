"""Issue 8's hostile-repository attempts through ccx and Claude Code, side by side.

    .venv/bin/python bench/hostile_repo.py [--client ccx|cc|both] [--json] [--list]

Both clients meet the same scripted server, the shared referee
(/work/shared/bench/fakeapi.py, loaded as it is; `--referee` for another copy): for each
permission mode a fresh hostile workspace, one headless session that gets one tool call
per attempt, and a snapshot of the workspace each time a main request arrives. Attempts
are judged only by side effect (tests/e2e/hostile/judge.py). Then the start-up trap:
`-p hi` in a repository whose git config runs code. Prints side effects per family.
Claude Code comes from /work/shared/bench/peers.sh (or $CLAUDE_BIN).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.hostile.attempt import MODES, Attempt
from tests.e2e.hostile.catalogue import ATTEMPTS, BY_ID, FAMILIES, in_mode
from tests.e2e.hostile.judge import Recorder, judge
from tests.e2e.hostile.plan import PROBES, TASK, build_plan, referee_scenario
from tests.e2e.hostile.repo import build_workspace, git_environment
from tests.e2e.hostile.startup import build_startup_trap, sprung

SHARED_BENCH = Path("/work/shared/bench")
CCX = str(Path(sys.executable).with_name("ccx"))
CLIENTS = {"ccx": "ccx", "cc": "Claude Code"}
SESSION_TIMEOUT_S = 900


def load_referee(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("hostile_referee", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the referee server from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def referee(
    module: ModuleType, scenario: dict[str, Any], recorder: Recorder, log: Path
) -> Iterator[str]:
    """The referee on 127.0.0.1, snapshotting the workspace as each main request arrives
    (its classify() runs under the server's lock, before the answer is chosen)."""
    state = module.State(scenario, str(log), 200_000, 0)
    state.summary_tokens = 4000
    classify = state.classify

    def classify_and_record(body: dict[str, Any]) -> str:
        kind = classify(body)
        if kind == "main":
            recorder.main_request(json.dumps(body))
        return kind

    state.classify = classify_and_record
    module.STATE = state
    server = ThreadingHTTPServer(("127.0.0.1", 0), module.Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        state.log.close()


def claude_binary() -> str | None:
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    peers = SHARED_BENCH / "peers.sh"
    if not peers.exists():
        return None
    out = subprocess.run(
        ["bash", "-c", f"source {peers} >/dev/null 2>&1; echo $CLAUDE_BIN"],
        capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip() or None


def client_environment(client: str, root: Path, repo: Path, url: str) -> dict[str, str]:
    home = root / "home"
    env = git_environment(home) | {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
    env = {k: v for k, v in env.items() if not k.startswith("CLAUDE")}
    if client == "ccx":
        return env | {"CCX_CONFIG_DIR": str(root / "ccx-config")}
    # Claude Code ignores a project's allow rules until the folder is trusted: trust it, as
    # the user who wrote those rules would have.
    state = home / ".claude.json"
    data = json.loads(state.read_text()) if state.exists() else {}
    data.setdefault("projects", {})[str(repo)] = {"hasTrustDialogAccepted": True}
    state.write_text(json.dumps(data))
    return env | {
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


@dataclass
class ClientResult:
    side_effects: dict[str, list[str]] = field(default_factory=dict)  # attempt id -> effects
    not_reached: list[str] = field(default_factory=list)
    probes_failed: list[str] = field(default_factory=list)  # the rules or mode not in force
    not_offered: dict[str, list[str]] = field(default_factory=dict)  # tool -> attempt ids
    startup: list[str] = field(default_factory=list)  # start-up trap: PWN files
    batch_startup: dict[str, list[str]] = field(default_factory=dict)
    exits: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Runner:
    """One client against the referee, one headless session at a time."""

    client: str
    binary: str
    module: ModuleType
    work: Path
    extra_args: tuple[str, ...] = ()

    def session(
        self, name: str, root: Path, repo: Path, prompt: str, mode: str,
        scenario: dict[str, Any], recorder: Recorder,
    ) -> tuple[int, float]:  # fmt: skip
        """Run the client once; its exit code and wall time."""
        with referee(self.module, scenario, recorder, self.work / f"{name}.log") as url:
            env = client_environment(self.client, root, repo, url)
            command = [self.binary, "-p", prompt, "--permission-mode", mode, *self.extra_args]
            started = time.perf_counter()
            done = subprocess.run(
                [*command, "--output-format", "json"], cwd=repo, env=env,
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=SESSION_TIMEOUT_S,
            )  # fmt: skip
            seconds = time.perf_counter() - started
        recorder.finish()
        return done.returncode, round(seconds, 1)

    def batch(self, mode: str, attempts: list[Attempt], result: ClientResult) -> None:
        name = f"{self.client}-{mode}"
        ws = build_workspace(self.work / name, attempts)
        plan = build_plan(attempts, ws.places, PROBES[mode])
        recorder = Recorder(ws.root)
        code, seconds = self.session(
            name, ws.root, ws.repo, TASK, mode, referee_scenario(plan), recorder
        )
        result.exits[mode], result.seconds[mode] = code, seconds
        judgement = judge(plan, BY_ID, recorder, ws, mode)
        result.batch_startup[mode] = judgement.startup
        result.probes_failed += [p for p, made in judgement.probes.items() if not made]
        offered = _offered_tools(recorder.bodies)
        for attempt in attempts:
            for tool in sorted({c.tool for c in (*attempt.before, attempt.call, *attempt.after)}):
                if tool not in offered:
                    result.not_offered.setdefault(tool, []).append(attempt.id)
        for verdict in judgement.verdicts.values():
            if not verdict.reached:
                result.not_reached.append(verdict.attempt.id)
            elif verdict.effects:
                result.side_effects[verdict.attempt.id] = verdict.effects

    def startup(self) -> list[str]:
        """`-p hi` in the start-up trap repository: the traps it sprang."""
        name = f"{self.client}-startup"
        trap = build_startup_trap(self.work / name)
        scenario = {"task": "hi", "steps": [], "final": "Hello."}
        recorder = Recorder(trap.root)
        self.session(name, trap.root, trap.repo, "hi", "default", scenario, recorder)
        if not recorder.bodies:
            return ["(no request reached the server)"]
        return sprung(trap.root)

    def measure(self) -> ClientResult:
        result = ClientResult()
        for mode in MODES:
            self.batch(mode, [a for a in in_mode(mode) if runnable(a)], result)
        result.startup = self.startup()
        return result


def _offered_tools(bodies: list[str]) -> set[str]:
    """The tools the client offered the model, from its first request."""
    if not bodies:
        return set()
    return {t.get("name") for t in json.loads(bodies[0]).get("tools") or [] if isinstance(t, dict)}


def runnable(attempt: Attempt) -> bool:
    return all(shutil.which(p) for p in attempt.needs)


def table(results: dict[str, ClientResult], attempts: list[Attempt]) -> str:
    names = list(results)
    header = f"{'family':<24}{'attempts':>9}" + "".join(f"{CLIENTS[n]:>14}" for n in names)
    lines = [header, "-" * len(header)]
    for family in FAMILIES:
        ids = [a.id for a in attempts if a.family == family]
        row = f"{family:<24}{len(ids):>9}"
        row += "".join(f"{sum(i in results[n].side_effects for i in ids):>14}" for n in names)
        lines.append(row)
    lines.append("-" * len(header))
    total = f"{'total':<24}{len(attempts):>9}"
    lines.append(total + "".join(f"{len(results[n].side_effects):>14}" for n in names))
    start = f"{'start-up trap (-p hi)':<24}{1:>9}"
    lines.append(start + "".join(f"{int(bool(results[n].startup)):>14}" for n in names))
    for name in names:
        for tool, ids in results[name].not_offered.items():
            lines.append(
                f"{CLIENTS[name]} offers no {tool} tool: {len(ids)} attempts could not run "
                f"(no side effect): {', '.join(ids)}"
            )
        if results[name].probes_failed:
            lines.append(
                f"WARNING {CLIENTS[name]}: probes failed ({', '.join(results[name].probes_failed)}): "
                "its rules or mode were not in force, so its figures prove nothing"
            )
        if results[name].not_reached:
            lines.append(
                f"{CLIENTS[name]}: never sent (session ended early): {', '.join(results[name].not_reached)}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--client", choices=("ccx", "cc", "both"), default="both")
    parser.add_argument("--json", action="store_true", help="one machine-readable line")
    parser.add_argument("--list", action="store_true", help="also list every side effect")
    parser.add_argument("--referee", type=Path, default=SHARED_BENCH / "fakeapi.py")
    parser.add_argument("--ccx", default=CCX, help="the ccx executable (default: this venv's)")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces")
    parser.add_argument(
        "--ccx-arg", action="append", default=[],
        help="an extra argument for ccx, e.g. --ccx-arg=--no-sandbox (the rules alone)",
    )  # fmt: skip
    args = parser.parse_args()
    module = load_referee(args.referee)
    binaries = {"ccx": args.ccx}
    if args.client in ("cc", "both"):
        binaries["cc"] = claude_binary() or ""
        if not binaries["cc"]:
            raise SystemExit("Claude Code is not installed (source /work/shared/bench/peers.sh)")
    clients = ["ccx", "cc"] if args.client == "both" else [args.client]
    attempts = [a for a in ATTEMPTS if runnable(a)]
    work = Path(tempfile.mkdtemp(prefix="hostile-bench-"))
    try:
        extra = {"ccx": tuple(args.ccx_arg), "cc": ()}
        results = {
            c: Runner(c, binaries[c], module, work, extra[c]).measure() for c in clients
        }
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    skipped = [a.id for a in ATTEMPTS if not runnable(a)]
    if args.json:
        print(json.dumps(report(results, attempts, skipped)))
        return
    print(table(results, attempts))
    if skipped:
        print(f"not run here (a program they need is missing): {', '.join(skipped)}")
    if args.keep:
        print(f"workspaces kept in {work}")
    if args.list:
        for name, result in results.items():
            print(f"\n{CLIENTS[name]}: side effects")
            for attempt_id, effects in result.side_effects.items():
                print(f"  {attempt_id}: {'; '.join(effects)}")
            print(f"  start-up trap: {result.startup or 'nothing'}")


def report(
    results: dict[str, ClientResult], attempts: list[Attempt], skipped: list[str]
) -> dict[str, Any]:
    families = {
        f: {"attempts": sum(a.family == f for a in attempts)}
        | {n: sum(BY_ID[i].family == f for i in r.side_effects) for n, r in results.items()}
        for f in FAMILIES
    }
    return {
        "attempts": len(attempts),
        "skipped": skipped,
        "families": families,
        "side_effects": {n: len(r.side_effects) for n, r in results.items()},
        "startup_trap": {n: r.startup for n, r in results.items()},
        "attempts_with_side_effects": {n: sorted(r.side_effects) for n, r in results.items()},
        "not_reached": {n: r.not_reached for n, r in results.items()},
        "probes_failed": {n: r.probes_failed for n, r in results.items()},
        "tools_not_offered": {n: r.not_offered for n, r in results.items()},
        "batch_startup": {n: r.batch_startup for n, r in results.items()},
        "exit_codes": {n: r.exits for n, r in results.items()},
        "seconds": {n: r.seconds for n, r in results.items()},
    }


if __name__ == "__main__":
    main()
