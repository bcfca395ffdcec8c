"""A fake Anthropic Messages API: a real HTTP + SSE server on 127.0.0.1, driven by a script.

Used by the tests (with the real `anthropic` client) and by the offline demo.
Only the standard library is used, so it ships inside the installed package.

    with FakeApi([tool_reply(("Read", {"file_path": "a.py"})), text_reply("Done.")]) as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        ...  # run the agent
        assert api.errors == []  # no request the real API would have rejected
        assert "a.py" in api.requests[-1].all_text()

Mid-stream faults surface in the SDK as: StreamError -> anthropic.APIStatusError
(status_code 200, .type from the event); Drop -> anthropic.APIConnectionError (its
cause an httpx2.RemoteProtocolError); Stall -> anthropic.APITimeoutError once the
client's read timeout passes.

The server is as strict as the real API (tui/fake_api/validation.py, thinking.py,
sdk_types.py): every request is checked against the API's documented rules and the
`anthropic` SDK's own request types, and refused in the API's words. With
``thinking_tokens`` it answers requests that turn thinking on with signed thinking.
"""

from tui.fake_api import accounting
from tui.fake_api.billing import (
    Billing,
    PromptCache,
    RequestBilling,
    estimate_output_tokens,
    estimate_request_tokens,
)
from tui.fake_api.models import DEFAULT_MODELS, ModelSpec
from tui.fake_api.recording import RecordedRequest
from tui.fake_api.script import (
    Drop,
    Fault,
    Reply,
    ResponseItem,
    Stall,
    StreamError,
    text_reply,
    tool_reply,
)
from tui.fake_api.server import SCRIPT_EXHAUSTED, FakeApi, Route, ScriptItem

__all__ = [
    "DEFAULT_MODELS",
    "SCRIPT_EXHAUSTED",
    "Billing",
    "Drop",
    "FakeApi",
    "Fault",
    "ModelSpec",
    "PromptCache",
    "RecordedRequest",
    "Reply",
    "RequestBilling",
    "ResponseItem",
    "Route",
    "ScriptItem",
    "Stall",
    "StreamError",
    "accounting",
    "estimate_output_tokens",
    "estimate_request_tokens",
    "text_reply",
    "tool_reply",
]
