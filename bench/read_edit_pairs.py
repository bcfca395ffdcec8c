"""Issue 22's read-state target: Read-then-Edit pairs through a small window, Edits refused.

    .venv/bin/python bench/read_edit_pairs.py [--pairs 60] [--window 45000] [--kb 6] [--talk 2000]
        [--client ccx|cc]

One repository of ``--pairs`` modules; one scripted headless session on the shared
referee (/work/shared/bench/fakeapi.py) that reads each module and then edits it,
with the referee refusing anything over ``--window`` and ccx compacting against it
(``--autocompact``). Compactions fall between a Read and its Edit; an Edit refused
there although its Read was still in the context is what this counts.

Prints one JSON line: Edits made (read back from the files), Edits refused, by
reason (unread, summarized away, changed on disk, other), how many of the refused
had their Read still in the request that carried the refusal, compactions, and the
referee's figures. ``CCX=path`` picks the ccx to run (default: this checkout's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REFEREE = Path(os.environ.get("CCX_REFEREE", "/work/shared/bench"))
ROOT = Path(__file__).resolve().parent.parent
TASK = "Give every module's retry limit a type annotation, one module at a time."


def build(work: Path, pairs: int, kb: int, talk: int) -> dict[str, Any]:
    repo = work / "repo"
    (repo / "pkg").mkdir(parents=True)
    steps: list[dict[str, Any]] = []
    for i in range(pairs):
        lines = [f'"""Module {i}."""', f"RETRY_LIMIT_{i:02d} = {100 + i}", ""]
        n = 0
        while sum(len(line) + 1 for line in lines) < kb * 1024:
            n += 1
            lines += [
                f"def handler_{i}_{n}(request, retries={n}):",
                f"    value = request.get('k{n}', {n * 7919 % 100003})",
                f"    return value * {n} + {i}",
                "",
            ]
        path = repo / "pkg" / f"module_{i:02d}.py"
        path.write_text("\n".join(lines) + "\n")
        # The model explains as it goes: text that clearing old tool results cannot take,
        # so the context reaches the threshold and compactions come.
        say = (f"Module {i}: reading it, then annotating its retry limit. " * 40)[:talk]
        steps.append({"say": say, "tool": "Read", "input": {"file_path": str(path)}})
        steps.append(
            {
                "say": say,
                "tool": "Edit",
                "input": {
                    "file_path": str(path),
                    "old_string": f"RETRY_LIMIT_{i:02d} =",
                    "new_string": f"RETRY_LIMIT_{i:02d}: int =",
                },
            }
        )
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    scenario = {"repo": str(repo), "task": TASK, "steps": steps, "final": "All annotated."}
    (work / "scenario.json").write_text(json.dumps(scenario, indent=1))
    return scenario


def refusals(log: Path) -> dict[str, Any]:
    """Each refused Edit once (by tool_use id), its reason, and whether the request that
    carried the refusal still held a successful Read of that file."""
    found: dict[str, dict[str, Any]] = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record["kind"] != "main" or record.get("refused"):
            continue
        messages = record["body"]["messages"]
        uses: dict[str, dict[str, Any]] = {}
        results: dict[str, dict[str, Any]] = {}
        for message in messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use":
                    uses[block["id"]] = block
                elif block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block
        for tool_id, block in results.items():
            use = uses.get(tool_id)
            if use is None or use["name"] != "Edit" or not block.get("is_error"):
                continue
            path = use["input"].get("file_path")
            read_kept = any(
                u["name"] == "Read"
                and u["input"].get("file_path") == path
                and (r := results.get(u["id"])) is not None
                and not r.get("is_error")
                for u in uses.values()
            )
            found.setdefault(
                tool_id, {"path": path, "reason": _reason(_text(block)), "read_kept": read_kept}
            )
    reasons: dict[str, int] = {}
    for item in found.values():
        reasons[item["reason"]] = reasons.get(item["reason"], 0) + 1
    return {
        "refused": len(found),
        "refused_with_read_in_context": sum(item["read_kept"] for item in found.values()),
        "refused_by_reason": reasons,
    }


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _reason(text: str) -> str:
    if "has not been read" in text:
        return "unread"
    if "summarized" in text or "compact" in text:
        return "summarized_away"
    if "modified on disk" in text:
        return "changed_on_disk"
    return "other"


def run(work: Path, pairs: int, window: int, kb: int, talk: int, client: str) -> dict[str, Any]:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    build(work, pairs, kb, talk)
    log = work / "log.jsonl"
    started = time.time()
    if client == "cc":
        command = [
            "bash",
            str(REFEREE / "run_claude.sh"),
            str(work),
            str(log),
            "--window",
            str(window),
            "--",
        ]
        env = {**os.environ}
    else:
        command = [
            "bash",
            str(REFEREE / "run_ccx.sh"),
            str(work),
            str(log),
            "--window",
            str(window),
        ]
        command += ["--", "--model", "claude-sonnet-4-5", "--autocompact", str(window)]
        env = {**os.environ, "CCX": os.environ.get("CCX", str(ROOT / ".venv" / "bin" / "ccx"))}
    subprocess.run(command, capture_output=True, text=True, env=env)
    edited = sum(
        f"RETRY_LIMIT_{i:02d}: int =" in (work / "repo" / "pkg" / f"module_{i:02d}.py").read_text()
        for i in range(pairs)
    )
    summary = subprocess.run(
        [sys.executable, str(REFEREE / "summarize_log.py"), str(log)],
        capture_output=True,
        text=True,
    )
    figures = json.loads(summary.stdout or "{}")
    return {
        "client": client,
        "pairs": pairs,
        "window": window,
        "edited": edited,
        **(refusals(log) if log.exists() else {}),
        "compactions": _compactions(work / "ccx.out")
        if client == "ccx"
        else figures.get("compactions"),
        "wall": round(time.time() - started, 1),
        "referee": figures,
    }


def _compactions(path: Path) -> dict[str, int]:
    try:
        result = json.loads(path.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return {}
    methods: dict[str, int] = {}
    for record in result.get("compactions", []):
        methods[record.get("method", "?")] = methods.get(record.get("method", "?"), 0) + 1
    return methods


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--window", type=int, default=45_000)
    parser.add_argument("--kb", type=int, default=6)
    parser.add_argument("--talk", type=int, default=2000, help="characters of text per step")
    parser.add_argument("--client", choices=("ccx", "cc"), default="ccx")
    parser.add_argument("--out", default="/tmp/read-edit-pairs")
    args = parser.parse_args()
    result = run(
        Path(args.out) / args.client, args.pairs, args.window, args.kb, args.talk, args.client
    )
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
