"""The scripted audit under context pressure: claude-sonnet-4-5 with a 120K auto-compact window.

Runs `ccx -p` through the 51-call audit (bench/audit.py) against the fake API,
which bills like the API (cache reads 0.1x, writes 1.25x, 5-minute TTL,
20-block lookback) and answers any summary request with a short paraphrase.
Reports, per the context-management issue's targets:

- the largest request and whether any broke the API's rules;
- how many model-written summaries there were, and the peak context;
- whether every request carried the user's request verbatim and the content
  of the 5 most recently read files;
- billed input-equivalent tokens (and with output at 5x).

    .venv/bin/python bench/compaction_audit.py [--window 120000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.audit import USER_REQUEST, ccx_args, make_repo, script
from bench.session_overhead import CCX, user_environment
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tui.fake_api import FakeApi, RecordedRequest, text_reply

MODEL = "claude-sonnet-4-5"
CLAUDE_CODE_BILLED = 816_000  # Claude Code 2.1.328 on the same script (the anchor)


def is_summary_request(request: RecordedRequest) -> bool:
    return SUMMARY_MARK in request.last_user_text()


def paraphrase(_request: RecordedRequest):
    return text_reply(
        "<analysis>The user wants the package audited.</analysis>\n<summary>\n"
        "1. Primary request and intent: audit the pkg modules one at a time and collect their facts.\n"
        "2. Key technical concepts: a Python package of forty similar modules.\n"
        "3. Files and code sections: several modules under pkg/ were read.\n"
        "4. Errors and fixes: none.\n5. Problem solving: reading in order.\n"
        "6. All user messages: the user asked for an audit of the repository.\n"
        "7. Pending tasks: read the remaining modules, bump the retry limit, write the table.\n"
        "8. Current work: reading modules in order.\n9. Next step: read the next module.\n</summary>"
    )


def check_requests(main: list[RecordedRequest], files: list[Path]) -> dict[str, Any]:
    """Verbatim request and the 5 most recent files' content in every main request."""
    read_order: list[str] = []  # file paths, in the order the model read them
    missing_request = 0
    missing_files: list[tuple[int, str]] = []
    contents = {str(p): p.read_text() for p in files}
    readme = files[0].parent.parent / "README.md"
    contents[str(readme)] = readme.read_text()
    for index, request in enumerate(main):
        text = request.all_text()
        if USER_REQUEST not in text:
            missing_request += 1
        recent: list[str] = []
        for path in reversed(read_order):
            if path not in recent:
                recent.append(path)
            if len(recent) == 5:
                break
        for path in recent:
            lines = [line for line in contents[path].splitlines() if line.strip()]
            if path.endswith("module_40.py"):
                lines = [
                    line for line in lines if "RETRY_LIMIT" not in line
                ]  # edited since the read
            if not all(line in text for line in lines):
                missing_files.append((index, Path(path).name))
        # What this request's reply reads, for the next requests.
        reply = request.response_item
        for block in getattr(reply, "content", []) or []:
            if block.get("type") == "tool_use" and block.get("name") == "Read":
                read_order.append(block["input"]["file_path"])
    return {
        "requests_missing_user_request": missing_request,
        "missing_recent_file_content": missing_files,
    }


def run(window: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        paths = make_repo(root)
        with FakeApi(script(paths, root)) as api:
            route = api.on(is_summary_request, paraphrase)
            env = dict(
                user_environment(),
                ANTHROPIC_BASE_URL=api.url,
                ANTHROPIC_API_KEY="bench",
                CCX_CONFIG_DIR=str(Path(tmp) / "config"),
                HOME=tmp,
            )
            started = time.perf_counter()
            args = ccx_args(MODEL, ["--autocompact", str(window)])
            proc = subprocess.run([CCX, *args], cwd=root, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                raise SystemExit(
                    f"ccx failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
                )
            result = json.loads(proc.stdout)
            requests = list(api.requests)
            main = [r for r in requests if not is_summary_request(r)]
            checks = check_requests(main, paths)
            billing = api.billing
            peak = max(r.estimated_tokens for r in main)
            return {
                "model": MODEL,
                "window": window,
                "requests": len(requests),
                "main_requests": len(main),
                "model_summaries": route.hits,
                "compactions": [
                    {k: c[k] for k in ("trigger", "kind", "tokens_before", "tokens_after")}
                    for c in result["compactions"]
                ],
                "largest_request_tokens": max(r.estimated_tokens for r in requests),
                "peak_context_tokens": peak,
                "api_rule_violations": list(api.errors),
                **checks,
                "billed_input_equivalent": round(billing.input_equivalent),
                "billed_with_output": round(billing.with_output),
                "vs_claude_code": round(billing.input_equivalent / CLAUDE_CODE_BILLED, 3),
                "usage": billing.usage(),
                "wall_s": round(wall, 2),
                "result_ok": result["result"].startswith("Audit complete."),
            }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--window", type=int, default=120_000)
    args = parser.parse_args()
    report = run(args.window)
    print(json.dumps(report, indent=2))
    targets = [
        ("no request over the window", report["largest_request_tokens"] <= report["window"]),
        ("no tool-pairing violations", not report["api_rule_violations"]),
        ("at most 2 model-written summaries", report["model_summaries"] <= 2),
        ("peak context <= 87K", report["peak_context_tokens"] <= 87_000),
        ("user request verbatim in every request", report["requests_missing_user_request"] == 0),
        ("5 most recent files in every request", not report["missing_recent_file_content"]),
        (
            "billed <= 0.75 x Claude Code (612K)",
            report["billed_input_equivalent"] <= 0.75 * CLAUDE_CODE_BILLED,
        ),
    ]
    for name, ok in targets:
        print(f"{'PASS' if ok else 'FAIL'}  {name}", file=sys.stderr)


if __name__ == "__main__":
    main()
