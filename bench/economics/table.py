"""The side-by-side table and the issue's targets, from the runs' rows.

input_equiv is in thousands; "kept" columns are requests that carry it over
requests checked (main requests the referee answered). Targets (issue 10):
spotter at 120K each <= 0.75 and mean <= 0.65; spotter at 200K mean <= 0.55;
generated at 100K each <= 0.8; in every run no refused request, the first
prompt verbatim in every request, ccx's retention at least Claude Code's; at
60K the longest replay compacts at least once by session memory and finishes.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

Row = dict[str, Any]


def ratio(ccx: Row | None, cc: Row | None) -> float | None:
    if not ccx or not cc or not ccx.get("input_equiv") or not cc.get("input_equiv"):
        return None
    return ccx["input_equiv"] / cc["input_equiv"]


def kept(row: Row | None, key: str) -> str:
    return f"{row[key]}/{row['checked']}" if row else "-"


def k(row: Row | None) -> str:
    if not row or not row.get("input_equiv"):
        return "-"
    spread = row.get("samples") or []
    if len(spread) > 1 and all(spread):
        return (
            f"{row['input_equiv'] / 1000:,.0f} [{spread[0] / 1000:,.0f}-{spread[-1] / 1000:,.0f}]"
        )
    return f"{row['input_equiv'] / 1000:,.0f}"


def ccx_compactions(row: Row | None) -> str:
    if not row:
        return "-"
    parts = [f"{n} {m}" for m, n in sorted((row.get("methods") or {}).items())]
    parts.append(f"{row.get('clears', 0)} clears")
    return ", ".join(parts)


def lines(pairs: list[tuple[Any, Row | None, Row | None]], cc_note: str) -> list[str]:
    """Markdown table: one line per run, then the mean ratio per family and window."""
    out = [
        "| run | window | CC | ccx | ccx/CC | CC summaries | ccx compactions | refused CC / ccx "
        "| prompt kept CC | prompt kept ccx | recent files CC | recent files ccx | finished CC / ccx |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run, ccx, cc in pairs:
        r = ratio(ccx, cc)
        out.append(
            f"| {run.id} | {run.window // 1000}K | {k(cc)} | {k(ccx)} | {f'{r:.2f}' if r else '-'} "
            f"| {cc['summaries'] if cc else '-'} | {ccx_compactions(ccx)} "
            f"| {cc['refused'] if cc else '-'} / {ccx['refused'] if ccx else '-'} "
            f"| {kept(cc, 'task_kept')} | {kept(ccx, 'task_kept')} "
            f"| {kept(cc, 'recent_kept')} | {kept(ccx, 'recent_kept')} "
            f"| {yes(cc)} / {yes(ccx)} |"
        )
    out.append("")
    for (family, window), rs in groups(pairs).items():
        out.append(f"mean ccx/CC, {family} at {window // 1000}K: {mean(rs):.2f} ({len(rs)} runs)")
    if cc_note:
        out.append(cc_note)
    return out


def yes(row: Row | None) -> str:
    return "-" if not row else ("yes" if row["ok"] else "NO")


def groups(pairs: list[tuple[Any, Row | None, Row | None]]) -> dict[tuple[str, int], list[float]]:
    out: dict[tuple[str, int], list[float]] = {}
    for run, ccx, cc in pairs:
        r = ratio(ccx, cc)
        if r is not None:
            out.setdefault((run.family, run.window), []).append(r)
    return out


def targets(pairs: list[tuple[Any, Row | None, Row | None]]) -> list[tuple[str, bool | None, str]]:
    """(target, PASS / FAIL / None when not measured in this run, the figures)."""
    g = groups(pairs)
    res: list[tuple[str, bool | None, str]] = []

    def each_and_mean(
        key: tuple[str, int], each: float | None, avg: float | None, name: str
    ) -> None:
        rs = g.get(key)
        if not rs:
            res.append((name, None, "not run"))
            return
        ok = (each is None or max(rs) <= each) and (avg is None or mean(rs) <= avg)
        res.append((name, ok, f"{', '.join(f'{x:.2f}' for x in rs)}; mean {mean(rs):.2f}"))

    each_and_mean(("spotter", 120_000), 0.75, 0.65, "spotter 120K: each <= 0.75, mean <= 0.65")
    each_and_mean(("spotter", 200_000), None, 0.55, "spotter 200K: mean <= 0.55")
    each_and_mean(("generated", 100_000), 0.8, None, "generated 100K: each <= 0.8")
    ccx_rows = [(run, ccx) for run, ccx, _ in pairs if ccx]
    bad = [run.id for run, row in ccx_rows if row["refused"]]
    res.append(
        (
            "ccx: no refused request",
            not bad if ccx_rows else None,
            ", ".join(bad) or f"{len(ccx_rows)} runs",
        )
    )
    bad = [run.id for run, row in ccx_rows if row["task_kept"] != row["checked"]]
    res.append(
        (
            "ccx: first prompt verbatim in every request",
            not bad if ccx_rows else None,
            ", ".join(bad) or f"{len(ccx_rows)} runs",
        )
    )
    both = [(run, ccx, cc) for run, ccx, cc in pairs if ccx and cc]
    bad = [
        run.id
        for run, ccx, cc in both
        if ccx["recent_kept"] / max(1, ccx["checked"]) < cc["recent_kept"] / max(1, cc["checked"])
    ]
    res.append(
        (
            "ccx retention >= CC's (share of requests)",
            not bad if both else None,
            ", ".join(bad) or f"{len(both)} runs",
        )
    )
    sixty = [(run, ccx) for run, ccx in ccx_rows if run.family == "spotter-60K"]
    if sixty:
        _run, row = sixty[0]
        sm = (row.get("methods") or {}).get("session_memory", 0)
        res.append(
            (
                "60K: longest replay compacts by session memory and finishes",
                sm >= 1 and row["ok"],
                f"{sm} session-memory compactions, finished: {row['ok']}",
            )
        )
    else:
        res.append(("60K: longest replay compacts by session memory and finishes", None, "not run"))
    return res


def target_lines(pairs: list[tuple[Any, Row | None, Row | None]]) -> list[str]:
    out = ["", "Targets:"]
    for name, ok, figs in targets(pairs):
        mark = "n/a " if ok is None else ("PASS" if ok else "FAIL")
        out.append(f"  {mark}  {name}  ({figs})")
    return out
