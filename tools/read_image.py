"""Read's image files: checked against the API's size limit and sniffed, sent as an image block.

The extension only picks this path; the media type comes from the file's magic
bytes, so a mislabelled file never reaches the API as the wrong type.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from tools.base import ToolResult
from tools.result_content import ImageBlock

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the API's limit, on the base64 text
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


async def read_image(path: Path, size: int) -> ToolResult:
    encoded_size = (size + 2) // 3 * 4
    if encoded_size > MAX_IMAGE_BYTES:
        return ToolResult.error(
            f"{path} is {size / 1e6:.1f} MB ({encoded_size / 1e6:.1f} MB as base64), over the "
            "5 MB limit for an image. Resize or compress it first (e.g. with a Bash command)."
        )
    try:
        data = await asyncio.to_thread(path.read_bytes)
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    media_type = sniff_image(data)
    if media_type is None:
        if not data:
            return ToolResult.error(f"{path} is empty, not an image.")
        return ToolResult.error(f"{path} does not contain a PNG, JPEG, GIF or WebP image.")
    block: ImageBlock = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
    display = f"Read image ({size / 1024:.0f} KiB, {media_type})"
    return ToolResult(
        output=[block],
        display=display,
        meta={"path": str(path), "media_type": media_type, "bytes": size, "display": display},
    )


def sniff_image(data: bytes) -> str | None:
    """The real format from the magic bytes: a mislabelled extension must not reach the API."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
