"""First paint of the full-screen app: launch of `ccx` to the header and the footer's meter on screen.

.venv/bin/python bench/tui_startup.py [--runs 7]
.venv/bin/python bench/tui_startup.py --vs-claude [--runs 5] [--claude PATH]

The second form is issue 20's target, side by side: ccx and Claude Code each launched in
tmux at 80x24, alternating, against the same fake API; for ccx the time to a token figure
in the meter ("5.3K / 1M"), for Claude Code the time to its footer; medians of the runs.
Target: ccx's median <= 1.0x Claude Code's. $CLAUDE_BIN or --claude names Claude Code
(`source /work/shared/bench/peers.sh` installs it).

Runs the real console script in a pseudo-terminal. The app writes a
timestamp to $CCX_FIRST_PAINT_FILE after the first refresh that drew the
footer; the script also notes when the meter's text and the welcome header
(`/help for commands`) reached the terminal, and whether `anthropic` had
been imported by then (it must not have been).
Target: first paint <= 500 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, precompile, user_environment
from bench.tui_pty import PtyApp
from tui.fake_api import FakeApi

TARGET_MS = 500


def one_run(env: dict[str, str], cwd: Path, paint_file: Path) -> dict[str, float | bool]:
    paint_file.unlink(missing_ok=True)
    app = PtyApp([CCX], env | {"CCX_FIRST_PAINT_FILE": str(paint_file)}, cwd)
    try:
        meter_seen = app.wait_for(b"context: starting", timeout=20)
        header_seen = app.wait_for(b"/help for commands", timeout=20)
        deadline = time.time() + 10
        while not paint_file.exists() or not paint_file.read_text():
            if time.time() > deadline:
                raise TimeoutError("no first-paint timestamp was written")
            time.sleep(0.01)
        painted = json.loads(paint_file.read_text())
        app.wait_for(b"until auto-compact", timeout=30)  # the runtime is up: quit cleanly
    finally:
        code = app.quit()
    return {
        "paint_ms": (painted["time"] - app.launched) * 1000,
        "before_app_ms": (painted["app_import_started"] - app.launched) * 1000,
        "app_ms": (painted["time"] - painted["app_import_started"]) * 1000,
        "meter_on_screen_ms": (meter_seen - app.launched) * 1000,
        "header_on_screen_ms": (header_seen - app.launched) * 1000,
        "anthropic_before_paint": bool(painted["anthropic"]),
        "exit_code": code,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--vs-claude", action="store_true", help="side by side with Claude Code")
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", ""))
    args = parser.parse_args()
    precompile()
    if args.vs_claude:
        from bench.tui_startup_vs import side_by_side

        if not args.claude or not Path(args.claude).exists():
            raise SystemExit("no Claude Code: source /work/shared/bench/peers.sh or pass --claude")
        print(json.dumps(side_by_side(args.claude, args.runs or 5), indent=2))
        return
    args.runs = args.runs or 7
    with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
        cwd = Path(tmp) / "repo"
        cwd.mkdir()
        (cwd / ".git").mkdir()
        env = user_environment() | {
            "CCX_CONFIG_DIR": str(Path(tmp) / "config"),
            "HOME": tmp,
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "bench",
        }
        paint_file = Path(tmp) / "first-paint.json"
        one_run(env, cwd, paint_file)  # warm the OS file cache
        runs = [one_run(env, cwd, paint_file) for _ in range(args.runs)]
    paint = [r["paint_ms"] for r in runs]
    seen = [r["meter_on_screen_ms"] for r in runs]
    report = {
        "runs": args.runs,
        "first_paint_median_ms": round(statistics.median(paint), 1),
        "first_paint_min_ms": round(min(paint), 1),
        "first_paint_max_ms": round(max(paint), 1),
        "meter_on_screen_median_ms": round(statistics.median(seen), 1),
        "header_on_screen_median_ms": round(
            statistics.median(r["header_on_screen_ms"] for r in runs), 1
        ),
        "launch_to_app_import_median_ms": round(
            statistics.median(r["before_app_ms"] for r in runs), 1
        ),
        "app_import_to_paint_median_ms": round(statistics.median(r["app_ms"] for r in runs), 1),
        "anthropic_imported_before_paint": any(r["anthropic_before_paint"] for r in runs),
        "exit_codes": sorted({int(r["exit_code"]) for r in runs}),
        "target_ms": TARGET_MS,
        "meets_target": statistics.median(paint) <= TARGET_MS,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
