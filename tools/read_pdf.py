"""Read's PDFs: sent to the model as a PDF document block, whole or by pages.

The API reads a PDF itself (text and page images), so nothing is rendered here:
a short PDF goes as it is; for ``pages`` the chosen pages are copied into a new,
smaller PDF with pypdf (pure Python, so no poppler is needed, unlike Claude Code's
page rendering). A long PDF must be read by pages, at most ``MAX_PAGES`` at a time.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from pathlib import Path
from typing import Any

from tools.base import ToolResult
from tools.result_content import DocumentBlock, text_block

MAX_WHOLE_PAGES = 10  # a longer PDF is read by pages
MAX_PAGES = 20  # pages in one Read
MAX_PDF_BYTES = 20 * 1024 * 1024  # what is sent, before base64: well inside the API's 32 MB request
_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


class PageRangeError(ValueError):
    pass


def parse_pages(spec: str, page_count: int) -> tuple[int, int]:
    """``"3"`` or ``"2-5"`` -> the first and last page (1-based, inclusive), checked."""
    match = _RANGE.fullmatch(spec)
    if match is None:
        raise PageRangeError(f'pages must be one page or a range, like "3" or "1-5"; got "{spec}".')
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1 or last < first:
        raise PageRangeError(f'pages "{spec}" is not a range of pages counted from 1.')
    if first > page_count:
        raise PageRangeError(f"The PDF has {page_count} pages, so page {first} is past its end.")
    last = min(last, page_count)
    if last - first + 1 > MAX_PAGES:
        raise PageRangeError(
            f"At most {MAX_PAGES} pages per Read: ask for {first}-{first + MAX_PAGES - 1}, "
            "then the next ones."
        )
    return first, last


async def read_pdf(path: Path, pages: str | None) -> ToolResult:
    return await asyncio.to_thread(_read_pdf, path, pages)


def _read_pdf(path: Path, pages: str | None) -> ToolResult:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    if not data.startswith(b"%PDF-"):
        return ToolResult.error(f"{path} does not start like a PDF (no %PDF- header).")
    try:
        from pypdf import PdfReader, PdfWriter
        from pypdf.errors import PdfReadError

        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return ToolResult.error(f"{path} is encrypted with a password; ccx cannot open it.")
        count = len(reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        return ToolResult.error(f"{path} is not a PDF ccx can read: {exc}")
    if count == 0:
        return ToolResult.error(f"{path} is a PDF with no pages.")

    if pages is None:
        if count > MAX_WHOLE_PAGES:
            return ToolResult.error(
                f"{path} has {count} pages, too many for one Read. Give pages, e.g. "
                f'"1-{min(MAX_PAGES, count)}", at most {MAX_PAGES} at a time.'
            )
        first, last, body = 1, count, data
    else:
        try:
            first, last = parse_pages(pages, count)
        except PageRangeError as exc:
            return ToolResult.error(str(exc))
        if (first, last) == (1, count):
            body = data
        else:
            try:
                writer = PdfWriter()
                for number in range(first - 1, last):
                    writer.add_page(reader.pages[number])
                out = io.BytesIO()
                writer.write(out)
                body = out.getvalue()
            except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
                return ToolResult.error(f"Cannot take pages {first}-{last} out of {path}: {exc}")
    if len(body) > MAX_PDF_BYTES:
        size = len(body) / 1_048_576
        return ToolResult.error(
            f"Pages {first}-{last} of {path} come to {size:.1f} MB, over the "
            f"{MAX_PDF_BYTES // 1_048_576} MB that can be sent at once: ask for fewer pages."
        )
    shown = f"page {first}" if first == last else f"pages {first}-{last}"
    block: DocumentBlock = {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": "application/pdf",
            "data": base64.b64encode(body).decode("ascii"),
        },
    }
    note = f"PDF {path}: {shown} of {count}."
    if last < count:
        note += f' To read on, call Read with pages "{last + 1}-{min(last + MAX_PAGES, count)}".'
    display = f"Read PDF ({shown} of {count})"
    meta: dict[str, Any] = {
        "path": str(path),
        "pages": [first, last],
        "page_count": count,
        "display": display,
    }
    return ToolResult(output=[text_block(note), block], display=display, meta=meta)
