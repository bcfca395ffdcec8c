"""After a compaction with one background job running, how often does the next request name it?

.venv/bin/python bench/jobs_after_compaction.py

Runs the real `ccx --plain` against ccx's fake Messages API: the model starts a
background Bash job (`sleep 600`), the session is compacted, and the user asks
again. It counts the lines of the next model request that name the job's id
(its restored status line carries the id, the description, the status and the
output path). Three compactions: a full /compact, a partial one
(/compact --keep-last 1) and a reactive one (the API refuses the next request
as too long, ccx compacts and retries). Target (issue 13): exactly 1 each.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, user_environment
from compaction.summary import SUMMARY_REQUEST_MARK
from tui.fake_api import FakeApi, Fault, text_reply, tool_reply

TARGET = 1
JOB_ID = re.compile(r"background as job (b[0-9a-z]{8})")
SUMMARY = text_reply("<analysis>a</analysis><summary>The user started a docs server.</summary>")


def script(kind: str) -> tuple[list[Any], str]:
    start = tool_reply(
        ("Bash", {"command": "sleep 600", "description": "serve the docs",
                  "run_in_background": True}),
    )  # fmt: skip
    items: list[Any] = [start, text_reply("Started.")]
    if kind == "reactive":
        items += [Fault.prompt_too_long(250_000, 200_000), SUMMARY, text_reply("Still up.")]
        return items, "start the server\nis it up?\n"
    command = "/compact" if kind == "full" else "/compact --keep-last 1"
    items += [SUMMARY, text_reply("Still up.")]
    return items, f"start the server\n{command}\nis it up?\n"


def run(kind: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        repo, config = Path(tmp) / "repo", Path(tmp) / "config"
        repo.mkdir()
        items, stdin = script(kind)
        with FakeApi(items) as api:
            env = dict(
                user_environment(),
                ANTHROPIC_BASE_URL=api.url,
                ANTHROPIC_API_KEY="bench",
                CCX_CONFIG_DIR=str(config),
                HOME=str(Path(tmp) / "home"),
                CCX_WARM="0",
                CCX_RETRY_BASE_DELAY_MS="5",
            )
            proc = subprocess.run(
                [CCX, "--plain", "--permission-mode", "bypassPermissions"],
                cwd=repo, env=env, input=stdin, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            requests = list(api.requests)
        found = JOB_ID.search(requests[1].all_text()) if len(requests) > 1 else None
        summaries = [r for r in requests if SUMMARY_REQUEST_MARK in r.last_user_text()]
        after = requests[-1] if requests else None
        if found is None or after is None or not summaries or after is summaries[-1]:
            return {"kind": kind, "error": f"run failed ({proc.returncode}): {proc.stderr[-500:]}"}
        job_id = found.group(1)
        lines = [line for line in after.all_text().splitlines() if job_id in line]
        return {"kind": kind, "summaries": len(summaries), "lines_naming_job": len(lines)}


def main() -> None:
    results = [run(kind) for kind in ("full", "partial", "reactive")]
    ok = all(r.get("lines_naming_job") == TARGET for r in results)
    print(json.dumps({"target": TARGET, "results": results, "met": ok}))


if __name__ == "__main__":
    main()
