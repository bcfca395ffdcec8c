"""Start-up figures: `ccx --version`, and a one-turn `ccx -p "hi"` against the fake API.

.venv/bin/python bench/startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_overhead import CCX, precompile, user_environment
from tui.fake_api import FakeApi, text_reply


def timed(args: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run([CCX, *args], env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ccx {' '.join(args)} failed: {proc.stderr[-1500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    precompile()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        env = user_environment() | {"CCX_CONFIG_DIR": str(cwd / "config"), "HOME": tmp}
        timed(["--version"], env, cwd)  # warm the OS file cache
        version = [timed(["--version"], env, cwd) for _ in range(args.runs)]
        with FakeApi([text_reply("Hello!") for _ in range(args.runs + 1)]) as api:
            env |= {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "bench"}
            timed(["-p", "hi"], env, cwd)
            hi = [timed(["-p", "hi"], env, cwd) for _ in range(args.runs)]
    report = {
        "version_median_ms": round(statistics.median(version) * 1000, 1),
        "version_max_ms": round(max(version) * 1000, 1),
        "p_hi_median_s": round(statistics.median(hi), 3),
        "p_hi_min_s": round(min(hi), 3),
    }
    print(json.dumps(report, indent=2))
    code = "import time; t = time.perf_counter(); import anthropic; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=user_environment()
    )
    print(
        f"(for scale: `import anthropic` alone takes {float(out.stdout):.2f} s here)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
