"""Read of a PDF: a document block, whole for short PDFs, by pages (a smaller PDF) for long ones."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from pypdf import PdfReader

from tests.tools.conftest import Call
from tools.base import ToolContext, ToolResult
from tools.read import ReadParams, ReadTool
from tools.read_pdf import MAX_PAGES, PageRangeError, parse_pages

READ = ReadTool()


def make_pdf(texts: list[str]) -> bytes:
    """A small valid PDF with one line of text a page, written out by hand."""
    font = 3 + 2 * len(texts)
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(texts)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(texts)} >>")
    for i, text in enumerate(texts):
        stream = f"BT /F1 24 Tf 72 700 Td ({text}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = "%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode("latin-1")


def sent_pages(result: ToolResult) -> list[str]:
    """The text of each page of the PDF the result sends."""
    assert isinstance(result.output, list), result.output
    note, document = result.output
    assert note["type"] == "text" and document["type"] == "document"
    source = document["source"]
    assert source["type"] == "base64" and source["media_type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(base64.b64decode(source["data"])))
    return [page.extract_text() for page in reader.pages]


@pytest.fixture
def pdf(ctx: ToolContext) -> Path:
    path = ctx.cwd / "report.pdf"
    path.write_bytes(make_pdf([f"Page {n} text" for n in range(1, 26)]))
    return path


@pytest.mark.parametrize(
    ("spec", "expected"), [("3", (3, 3)), ("2-5", (2, 5)), (" 4 - 6 ", (4, 6)), ("20-99", (20, 25))]
)
def test_page_ranges(spec: str, expected: tuple[int, int]) -> None:
    assert parse_pages(spec, 25) == expected


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("0", "counted from 1"),
        ("5-2", "counted from 1"),
        ("x", "like"),
        ("30", "past its end"),
        ("1-21", f"At most {MAX_PAGES}"),
    ],
)
def test_bad_page_ranges(spec: str, words: str) -> None:
    with pytest.raises(PageRangeError, match=words):
        parse_pages(spec, 25)


async def test_a_short_pdf_is_sent_whole(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "short.pdf"
    path.write_bytes(make_pdf(["alpha", "beta"]))
    result = await call(READ, file_path="short.pdf")
    assert not result.is_error, result.output
    assert [text.strip() for text in sent_pages(result)] == ["alpha", "beta"]
    assert result.output[0]["text"] == f"PDF {path}: pages 1-2 of 2."  # type: ignore[index]
    assert result.display == "Read PDF (pages 1-2 of 2)"


async def test_pages_of_a_long_pdf(pdf: Path, call: Call) -> None:
    result = await call(READ, file_path=str(pdf), pages="4-6")
    assert not result.is_error, result.output
    assert [text.strip() for text in sent_pages(result)] == [
        "Page 4 text",
        "Page 5 text",
        "Page 6 text",
    ]
    note = result.output[0]["text"]  # type: ignore[index]
    assert "pages 4-6 of 25" in note and 'pages "7-25"' in note
    assert result.meta["pages"] == [4, 6]
    assert READ.label(ReadParams(file_path="r.pdf", pages="4-6")) == "Read r.pdf (pages 4-6)"


async def test_a_long_pdf_needs_pages(pdf: Path, call: Call) -> None:
    result = await call(READ, file_path=str(pdf))
    assert result.is_error and "25 pages" in result.output and '"1-20"' in result.output
    too_many = await call(READ, file_path=str(pdf), pages="1-25")
    assert too_many.is_error and "At most 20 pages" in too_many.output


async def test_bad_pdfs_and_misplaced_pages(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "torn.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<")
    torn = await call(READ, file_path="torn.pdf")
    assert torn.is_error and "torn.pdf" in torn.output
    (ctx.cwd / "fake.pdf").write_bytes(b"just text")
    fake = await call(READ, file_path="fake.pdf")
    assert fake.is_error and "does not start like a PDF" in fake.output
    (ctx.cwd / "a.txt").write_text("hello")
    misplaced = await call(READ, file_path="a.txt", pages="1")
    assert misplaced.is_error and "only for PDF" in misplaced.output
