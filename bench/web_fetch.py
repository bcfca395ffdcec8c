"""What WebFetch costs on its own side: HTML to Markdown by size, and a whole fetch from 127.0.0.1.

``python bench/web_fetch.py [N]`` (default 3 runs each, medians). The pages
are synthetic documentation-like HTML (prose, a table, lists, code); the
whole fetch runs the tool without a page reader (the fast model's call is the
API's time, not ccx's) against tests/web_server.py's site, first fetch and a
cached one. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web_server import web_site  # noqa: E402
from tools.base import ToolContext  # noqa: E402
from tools.file_state import FileStateCache  # noqa: E402
from tools.web_fetch import WebFetchTool  # noqa: E402
from tools.web_text import html_to_markdown  # noqa: E402

SECTION = (
    "<h2>Options</h2><p>The client <em>retries</em> a request with <a href='/backoff'>backoff"
    "</a>; see <code>RetryPolicy</code> for the defaults and how to change them.</p>"
    "<table><tr><th>name</th><th>default</th></tr>"
    + "<tr><td><code>max_attempts</code></td><td>10</td></tr>" * 8
    + "</table><ul>"
    + "<li>first backoff: <b>0.5 s</b></li>" * 6
    + "</ul><pre><code>policy = RetryPolicy(max_attempts=3)\nclient.stream(request)</code></pre>"
)


def page(size: int) -> bytes:
    body = SECTION * (size // len(SECTION) + 1)
    return f"<html><head><title>Guide</title></head><body>{body}</body></html>".encode()[:size]


def conversion(runs: int) -> dict[str, float]:
    figures = {}
    for kib in (100, 500, 2_048, 8_192):
        html = page(kib * 1024)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            html_to_markdown(html)
            times.append(time.perf_counter() - started)
        figures[f"{kib}KiB_s"] = round(statistics.median(times), 3)
    return figures


async def whole_fetch(runs: int) -> dict[str, float]:
    ctx = ToolContext(cwd=ROOT, file_state=FileStateCache())
    first, cached = [], []
    with web_site() as site:
        url = site.url("/page.html")
        for _ in range(runs):
            tool = WebFetchTool()
            params = tool.parse({"url": url, "prompt": "p"})
            for times in (first, cached):
                started = time.perf_counter()
                result = await tool.run(params, ctx)  # type: ignore[arg-type]
                times.append(time.perf_counter() - started)
                assert not result.is_error, result.output
    return {
        "first_fetch_ms": round(statistics.median(first) * 1000, 1),
        "cached_fetch_ms": round(statistics.median(cached) * 1000, 2),
    }


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    html_to_markdown(page(1024))  # the import out of the figures
    figures = {"runs": runs, "html_to_markdown": conversion(runs)}
    figures.update(asyncio.run(whole_fetch(runs)))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
