"""The table bench/scale.py prints: one row per figure, one column per client."""

from __future__ import annotations

from typing import Any

MEMORY_STEPS = (500, 1000, 2000)


def table(report: dict[str, Any], clients: list[tuple[str, str]]) -> str:
    rows: list[tuple[str, ...]] = []
    by = {(r["client"], r["steps"], r["window"]): r for r in report.get("sessions", [])}
    for steps, window in sorted({(r["steps"], r["window"]) for r in report.get("sessions", [])}):
        size = f"{steps} steps @ {window // 1000}K"
        runs = [by.get((c[0], steps, window)) for c in clients]

        def row(label: str, cell: Any, runs: list[Any] = runs, size: str = size) -> None:
            rows.append((f"{label} [{size}]", *(cell(r) if r else "-" for r in runs)))

        row("Edits refused, Read in context", lambda r: _refused(r["figures"]))
        row("per-step overhead (median ms)", lambda r: str(r["figures"]["step_overhead_ms"]))
        row("peak memory, process tree (MB)", lambda r: str(r["peak_rss_mb"]))
        row("memory at steps 500/1000/2000 (MB)", lambda r: "/".join(str(r["rss_at_step_mb"].get(n) or r["rss_at_step_mb"].get(str(n)) or "-") for n in MEMORY_STEPS))  # fmt: skip
        row("transcript size (MB)", lambda r: str(r["transcript_mb"]))
        row("task verbatim in requests", lambda r: f"{r['figures']['task_kept']}/{r['figures']['main']}")  # fmt: skip
        row("steps done / summaries / exit", lambda r: f"{r['figures']['last_step']} / {r['figures']['summaries']} / {r['exit_code']}")  # fmt: skip
        row("resume (-c -p) to first request (s)", lambda r: str(r["resume_first_request_s"]))
        row("  resume, ccx's warm worker (s)", lambda r: str(r.get("warm_resume_first_request_s") or "-"))  # fmt: skip
    for name, cold in report.get("cold", {}).items():
        name = name if name.endswith(("repo", "kept")) else f"{name} repo"  # older reports
        rows.append((f"cold -p to first request, {name} (s)", *(_median(cold, c[0]) for c in clients)))  # fmt: skip
        rows.append((f"  CPU used by then, {name} (s)", *(_median(cold, c[0], "cpu_median_s") for c in clients)))  # fmt: skip
    if "concurrent" in report:
        conc = report["concurrent"]
        rows.append(("4 sessions, one file: lost updates", *(_conc(conc, c[0], "lost_updates") for c in clients)))  # fmt: skip
        rows.append(("4 sessions: edits done / given", *(_conc(conc, c[0], "done") for c in clients)))  # fmt: skip
        rows.append(("4 sessions: peak memory, sum (MB)", *(_conc(conc, c[0], "peak_rss_mb_sum") for c in clients)))  # fmt: skip
    for label, ccx, claude in report.get("grep", []):  # measured by ccx and Claude Code only
        rows.append((label, *({"ccx": ccx, "claude": claude}.get(c[0], "-") for c in clients)))
    header = ("", *(c[1] for c in clients))
    widths = [max(len(str(r[i])) if i < len(r) else 0 for r in [header, *rows]) for i in range(len(header))]  # fmt: skip
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=False))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)) for r in rows]
    return "\n".join(lines)


def _refused(figures: dict[str, Any]) -> str:
    gone = figures["refused_read_gone"]
    return (
        f"{figures['refused_read_in_context']} of {figures['edits']} (+{gone} Read summarized away)"
    )


def _median(cold: dict[str, Any], client: str, key: str = "median_s") -> str:
    return str(cold[client].get(key, "-")) if client in cold else "-"


def _conc(conc: dict[str, Any], client: str, key: str) -> str:
    figures = conc.get(client)
    if not figures:
        return "-"
    if key == "done":
        return f"{figures['edits_in_file']} in file, {figures['edits_reported_done']} reported / {figures['edits_given']}"  # fmt: skip
    return str(figures[key])
