"""A request the fake Messages API refuses: HTTP status, the API's error type, its message."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rejection:
    status: int
    error_type: str
    message: str


def invalid(message: str) -> Rejection:
    """The API's 400 invalid_request_error."""
    return Rejection(400, "invalid_request_error", message)
