"""Time of the read-only check per Bash command: split (tree-sitter parse and walk) plus
classify every part, over the whole test corpus (Codex's and Claude Code's lists, issue 8's
attacks); target <= 1 ms median.

Each call parses from scratch (the split cache is cleared first), as for a command ccx has
not seen; the cached figure is what a repeated command costs. Also reported: the whole
permission decision for a Bash call (rules, paths read and written, protected paths) in a
small project under issue 8's rules, and, once, loading the grammar on first use, which
start-up does not pay.

    .venv/bin/python bench/classifier.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "agent" / "shell" / "commands"


def corpus() -> list[str]:
    commands = []
    for path in sorted(DATA.glob("*.txt")):
        offset = 4 if path.name.startswith("claude_code") else 2
        for line in path.read_text(encoding="utf-8").splitlines():
            if line[:1] in ("+", "-"):
                commands.append(line[offset:])
    for line in (DATA / "codex_bash_parse.jsonl").read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            commands.append(json.loads(line)["command"])
    return commands


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def gate_times(commands: list[str], rounds: int) -> list[float]:
    """Milliseconds of PermissionGate.check per Bash call, parse included."""
    import tempfile

    import agent.shell.split as shell_split
    from agent.permissions.gate import PermissionGate, Rule

    allow = ["Bash(git status)", "Bash(ls *)", "Bash(npm test *)", "Bash(git log *)"]
    deny = ["Read(./.env)", "Bash(rm *)", "Bash(curl *)"]
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / ".env").write_text("SECRET=1\n")
        (project / "src").mkdir()
        for name in ("app.py", "util.py", "README.md"):
            (project / name).write_text("x\n")
        gate = PermissionGate(
            "default", [Rule.parse(r) for r in allow], [Rule.parse(r) for r in deny], [],
            cwd=project, project_root=project, home=project / "home",
        )  # fmt: skip
        for _ in range(rounds):
            for command in commands:
                shell_split._split.cache_clear()
                t0 = time.perf_counter()
                gate.check("Bash", {"command": command}, True)
                times.append((time.perf_counter() - t0) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    started = time.perf_counter()
    import agent.shell.split as shell_split
    from agent.shell.readonly import is_read_only

    imported = time.perf_counter()
    shell_split.split_command("true")
    first_parse = time.perf_counter()

    commands = corpus()
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(args.rounds):
        for command in commands:
            shell_split._split.cache_clear()
            t0 = time.perf_counter()
            for part in shell_split.split_command(command):
                is_read_only(part)
            t1 = time.perf_counter()
            for part in shell_split.split_command(command):
                is_read_only(part)
            t2 = time.perf_counter()
            cold.append((t1 - t0) * 1000)
            warm.append((t2 - t1) * 1000)

    print(f"corpus: {len(commands)} commands x {args.rounds} rounds = {len(cold)} calls")
    print(
        f"split + classify, uncached: median {statistics.median(cold):.3f} ms, "
        f"p95 {percentile(cold, 0.95):.3f} ms, max {max(cold):.3f} ms (target <= 1 ms median)"
    )
    print(
        f"split + classify, cached:   median {statistics.median(warm):.3f} ms, "
        f"p95 {percentile(warm, 0.95):.3f} ms"
    )
    decided = gate_times(commands, args.rounds)
    print(
        f"whole Bash permission check:  median {statistics.median(decided):.3f} ms, "
        f"p95 {percentile(decided, 0.95):.3f} ms"
    )
    print(
        f"import agent.shell.split + readonly_commands: {(imported - started) * 1000:.1f} ms; "
        f"loading the grammar on the first parse: {(first_parse - imported) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
