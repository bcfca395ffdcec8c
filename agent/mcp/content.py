"""An MCP tool result's content items as content blocks the Messages API takes.

Text comes as it is, blank text left out (the API refuses a text block without
words). An image goes to the model only when its bytes are JPEG, PNG, GIF or
WebP and it fits the API's 5 MB; any other image (SVG, BMP, TIFF, a mislabelled
or oversized one), audio and a binary resource are saved to the session's
folder (``mcp-outputs/``) and described in a text block: where, what type,
how big, so the model can still reach them with its tools (as Claude Code
does). One refused block in the history would fail every later request.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import uuid
from pathlib import Path
from typing import Any

from agent.core.sendable import is_blank
from tools.read_image import MAX_IMAGE_BYTES, sniff_image
from tools.result_content import ToolResultPart

Block = ToolResultPart
FOLDER = "mcp-outputs"


def content_blocks(items: Any, server: str, folder: Path | None) -> list[Block]:
    """The blocks of a result's ``content`` items, in order (``folder``: the session's, where
    what cannot be shown is saved)."""
    blocks = [block for item in items or [] for block in _blocks(item, server, folder)]
    return [b for b in blocks if b["type"] != "text" or not is_blank(b["text"])]


def _blocks(item: Any, server: str, folder: Path | None) -> list[Block]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return [{"type": "text", "text": str(item.text)}]
    if kind == "image":
        return [_image(item.data, item.mime_type, f"An image from {server}", folder)]
    if kind == "audio":
        return [_binary(item.data, item.mime_type, f"Audio from {server}", folder)]
    if kind == "resource":
        return _resource(item.resource, server, folder)
    if kind == "resource_link":
        return [{"type": "text", "text": f"[Resource link: {item.name} {item.uri}]"}]
    return [{"type": "text", "text": f"[{kind or 'unknown'} content, not shown]"}]


def _resource(resource: Any, server: str, folder: Path | None) -> list[Block]:
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return [{"type": "text", "text": f"[Resource {resource.uri}]\n{text}"}]
    mime = getattr(resource, "mime_type", None)
    label = f"The resource {resource.uri} from {server}"
    blob = getattr(resource, "blob", "") or ""
    if str(mime or "").startswith("image/"):
        return [_image(blob, mime, label, folder)]
    return [_binary(blob, mime, label, folder)]


def _image(data: Any, mime: Any, label: str, folder: Path | None) -> Block:
    """An image block when the model can be shown it, else the saved file described."""
    raw = _decoded(data)
    if raw is None:
        return {"type": "text", "text": f"[{label}: its data is not valid base64, not shown]"}
    media_type = sniff_image(raw)  # the API checks the bytes, not the label
    if media_type is None:
        why = "the model takes only JPEG, PNG, GIF and WebP images; these bytes are none"
        return _described(raw, str(mime or "unknown type"), label, folder, why)
    if (len(raw) + 2) // 3 * 4 > MAX_IMAGE_BYTES:
        why = f"over the {MAX_IMAGE_BYTES // (1024 * 1024)} MB an image may have"
        return _described(raw, media_type, label, folder, why)
    encoded = base64.b64encode(raw).decode("ascii")  # as the API reads it: no line breaks
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": encoded},
    }


def _binary(data: Any, mime: Any, label: str, folder: Path | None) -> Block:
    raw = _decoded(data)
    if raw is None:
        return {"type": "text", "text": f"[{label}: its data is not valid base64, not shown]"}
    return _described(raw, str(mime or "application/octet-stream"), label, folder, "")


def _described(raw: bytes, mime: str, label: str, folder: Path | None, why: str) -> Block:
    """A text block saying what the content is and where it was saved (or why it was not)."""
    what = f"{label}: {mime}, {len(raw):,} bytes"
    shown = f"not shown ({why})" if why else "not shown"
    path, problem = save_binary(raw, mime, folder)
    where = f"saved to {path}" if path is not None else f"not saved: {problem}"
    return {"type": "text", "text": f"[{what}, {shown}; {where}]"}


def save_binary(data: bytes, mime: str, folder: Path | None) -> tuple[Path | None, str]:
    """``data`` saved in the session ``folder``'s ``mcp-outputs`` under a new name with the
    type's extension: (its path, "") or (None, why not)."""
    if folder is None:
        return None, "no session folder"
    from tools.atomic_file import atomic_write

    suffix = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
    path = Path(folder) / FOLDER / f"{uuid.uuid4()}{suffix}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    return path, ""


def _decoded(data: Any) -> bytes | None:
    try:
        return base64.b64decode("".join(str(data or "").split()), validate=True)
    except (binascii.Error, ValueError):
        return None
