"""Where a run's cost goes, from the referee's log: per request kind and per part of the prompt.

    .venv/bin/python bench/economics/breakdown.py [OUT] [--only PATTERN] [--requests RUN.CLIENT]

OUT is bench/economics.py's work folder (default /tmp/econbench-<worktree hash>); every
run folder in it with a log (OUT/<run>.ccx, OUT/<run>.cc) gets one line per client:

- the bill in input-token equivalents (the referee's rates: uncached 1.0, cache write
  1.25, cache read 0.1, output 5.0), split by request kind (main: the agent's steps;
  compact: summary requests; side: anything else, e.g. a notes update that carries no
  agent tools) and by rate;
- for main requests, the writes split into growth (the blocks new since the previous
  main request, at the end of the prompt) and rewrites (blocks already sent once, written
  again because an earlier block changed: a clear, a compaction, a dropped thought);
- what the reads paid for: the mean prompt of a main request by part (tool definitions
  and system prompt, earlier thinking blocks, tool results, everything else) and the
  mean number of thinking blocks it sends back.

``--requests RUN.CLIENT`` prints that run's requests one a line instead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RATES = {"uncached": 1.0, "cache_write": 1.25, "cache_read": 0.1, "out": 5.0}


def tokens(obj: Any) -> int:
    """The referee's count: 4 characters a token (fakeapi.est_tokens)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return (len(text) + 3) // 4


def segments(body: dict[str, Any]) -> list[tuple[str, int, str]]:
    """The prompt as the referee bills it, block by block: (part, tokens, identity)."""
    out = []
    for t in body.get("tools") or []:
        out.append(("prefix", tokens(t), json.dumps(t, sort_keys=True)))
    system = body.get("system")
    if isinstance(system, str):
        out.append(("prefix", tokens(system), system))
    else:
        for b in system or []:
            out.append(("prefix", tokens(b.get("text", "")), json.dumps(b, sort_keys=True)))
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            out.append(("text", tokens(content), m["role"] + content))
            continue
        for b in content:
            bb = {k: v for k, v in b.items() if k != "cache_control"}
            kind = b.get("type")
            part = (
                "thinking"
                if kind in ("thinking", "redacted_thinking")
                else "results"
                if kind == "tool_result"
                else "text"
            )
            out.append((part, tokens(bb), m["role"] + json.dumps(bb, sort_keys=True)))
    return out


def digest(seg: tuple[str, int, str]) -> str:
    return hashlib.sha1(seg[2].encode()).hexdigest()


def analyse(log: Path) -> dict[str, Any]:
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    bill: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    parts: dict[str, float] = defaultdict(float)
    growth = rewrite = 0.0
    thoughts = 0
    mains = 0
    seen: set[str] = set()
    prev: list[str] = []
    for r in recs:
        if r.get("refused"):
            count["refused"] += 1
            continue
        kind = r["kind"]
        count[kind] += 1
        for key, rate in RATES.items():
            bill[f"{kind}:{key}"] += rate * r.get(key, 0)
        if kind != "main":
            continue
        mains += 1
        segs = segments(r["body"])
        ids = [digest(s) for s in segs]
        for s in segs:
            parts[s[0]] += s[1]
        thoughts += sum(1 for s in segs if s[0] == "thinking")
        # the blocks new since the previous main request, vs those sent before
        common = 0
        while common < min(len(ids), len(prev)) and ids[common] == prev[common]:
            common += 1
        old_after = sum(s[1] for s, i in zip(segs[common:], ids[common:], strict=True) if i in seen)
        written = r.get("cache_write", 0)
        rewrite += min(written, old_after)
        growth += written - min(written, old_after)
        seen.update(ids)
        prev = ids
    total = sum(bill.values())
    return {
        "requests": dict(count),
        "bill": {k: round(v) for k, v in sorted(bill.items()) if v},
        "total": round(total),
        "main_write_growth": round(1.25 * growth),
        "main_write_rewrite": round(1.25 * rewrite),
        "mean_prompt": {k: round(v / max(1, mains)) for k, v in sorted(parts.items())},
        "mean_thinking_blocks": round(thoughts / max(1, mains), 1),
    }


def request_lines(log: Path) -> list[str]:
    out = []
    recs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    for i, r in enumerate(recs):
        segs = segments(r["body"])
        by: dict[str, int] = defaultdict(int)
        for s in segs:
            by[s[0]] += s[1]
        th = sum(1 for s in segs if s[0] == "thinking")
        out.append(
            f"{i:>4} {r['kind']:<7} {r.get('refused') or '':<8} tok {r['tokens']:>7} "
            f"R {r['cache_read']:>7} W {r['cache_write']:>6} U {r['uncached']:>6} "
            f"out {r.get('out', 0):>5} | prefix {by['prefix']:>5} thinking {by['thinking']:>6} ({th:>3}) "
            f"results {by['results']:>6} other {by['text']:>6} | msgs {r['n_messages']:>4} "
            f"max_tokens {r.get('max_tokens')}"
        )
    return out


def k(x: float) -> str:
    return f"{x / 1000:,.0f}"


def row(name: str, a: dict[str, Any]) -> str:
    b = a["bill"]
    main_ = {key.split(":")[1]: v for key, v in b.items() if key.startswith("main:")}
    other = defaultdict(float)
    for key, v in b.items():
        if not key.startswith("main:"):
            other[key.split(":")[0]] += v
    p = a["mean_prompt"]
    return (
        f"| {name} | {k(a['total'])} | {k(main_.get('out', 0))} | {k(main_.get('cache_write', 0))} "
        f"({k(a['main_write_growth'])} + {k(a['main_write_rewrite'])}) | {k(main_.get('cache_read', 0))} "
        f"| {k(main_.get('uncached', 0))} | {k(other.get('compact', 0))} ({a['requests'].get('compact', 0)}) "
        f"| {k(other.get('side', 0))} ({a['requests'].get('side', 0)}) "
        f"| {p.get('prefix', 0):,} / {p.get('thinking', 0):,} ({a['mean_thinking_blocks']}) / "
        f"{p.get('results', 0):,} / {p.get('text', 0):,} |"
    )


HEADER = [
    "| run.client | total | output | cache writes (growth + rewrites) | cache reads | uncached "
    "| summaries (n) | side calls (n) | mean main prompt: prefix / thinking (blocks) / results / other |",
    "|---|---|---|---|---|---|---|---|---|",
]


def default_out() -> Path:
    return Path(f"/tmp/econbench-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/economics/breakdown.py", description=__doc__)
    ap.add_argument("out", nargs="?", default="", help="bench/economics.py's work folder")
    ap.add_argument("--only", default="", help="only runs whose folder name contains this")
    ap.add_argument("--requests", default="", help="RUN.CLIENT: one line per request")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else default_out()
    if a.requests:
        log = out / a.requests / "log.jsonl"
        if not log.exists():
            print(f"no log at {log}", file=sys.stderr)
            return 2
        print("\n".join(request_lines(log)))
        return 0
    logs = sorted(p for p in out.glob("*/log.jsonl") if a.only in p.parent.name)
    if not logs:
        print(f"no run logs under {out}", file=sys.stderr)
        return 2
    results = {p.parent.name: analyse(p) for p in logs}
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print("\n".join(HEADER + [row(name, r) for name, r in results.items()]))
    print(
        "\nthousands of input-token equivalents (uncached 1.0, write 1.25, read 0.1, output 5.0); "
        "output, writes, reads and uncached are the main requests'; prompt parts in tokens"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
