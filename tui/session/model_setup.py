"""The session's model and what its requests ask of it, from flags, environment and settings.

- The model: ``--model``, else the setting ``model``, else ``ANTHROPIC_MODEL``,
  else the default (``agent.model.catalog.DEFAULT_MODEL``); aliases resolved
  (``opus``, ``best``, ``fable`` ...), ``opusplan`` planning with opus and
  working with sonnet, ``[1m]`` giving a 200K model the 1M-context beta. A name
  neither the table nor the Models API knows is refused before its first
  request (``model_check``).
- Thinking and effort (``agent.model.thinking.choose``): ``--max-thinking-tokens``,
  ``--thinking``, ``--effort``, then ``MAX_THINKING_TOKENS``,
  ``CLAUDE_CODE_EFFORT_LEVEL``, ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, then the settings
  ``alwaysThinkingEnabled`` and ``effortLevel``. Thinking text is asked for
  ("summarized") where a front end shows it, omitted in a plain ``-p`` run.
- ``metadata.user_id``: a device id kept in ccx's config folder, and the session id.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
from typing import TYPE_CHECKING

from agent.core.locations import config_dir
from agent.model.catalog import LONG_CONTEXT_WINDOW, ModelLimits, ModelName, model_exists
from agent.model.thinking import ThinkingChoice, ThinkingError, choose
from tui.session.options import StartupError

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

log = logging.getLogger(__name__)

DEVICE_ID_FILE = "device_id"
DEVICE_ID = re.compile(r"^[0-9a-f]{64}$")
ALIAS_HINT = "opus, sonnet, haiku, fable, opusplan, best, default, or a full model id"


def session_model(runtime: Runtime) -> ModelName:
    """The model the session starts with, as named (aliases resolved)."""
    name = ModelName.parse(
        runtime.options.model or runtime.settings.model or os.environ.get("ANTHROPIC_MODEL")
    )
    if name.long_context:
        runtime.long_context_models.add(name.id)
    return name


def fallback_model(runtime: Runtime) -> str | None:
    """``--fallback-model`` or the setting ``fallbackModel``, resolved (the first of a list)."""
    typed = runtime.options.fallback_model or runtime.settings.fallback_model
    first = (typed or "").split(",")[0].strip()
    return ModelName.parse(first).id if first else None


def switch_model(runtime: Runtime, typed: str, effort: str | None = None) -> None:
    """/model NAME [EFFORT]: the model from the next request on (ThinkingError: a bad effort)."""
    choice = runtime.thinking.with_effort(effort) if effort is not None else runtime.thinking
    name = ModelName.parse(typed)
    if name.long_context:
        runtime.long_context_models.add(name.id)
    runtime.model_name, runtime.thinking = name, choice
    runtime.use_model(name.for_mode(runtime.gate.mode == "plan"))
    configure_requests(runtime)


def thinking_choice(runtime: Runtime) -> ThinkingChoice:
    options, settings = runtime.options, runtime.settings
    try:
        return choose(
            env=os.environ,
            always_thinking=settings.get("alwaysThinkingEnabled"),
            effort_setting=settings.get("effortLevel"),
            flag_budget=options.max_thinking_tokens,
            flag_mode=options.thinking,
            flag_effort=options.effort,
            display="summarized" if options.show_thinking else "omitted",
        )
    except ThinkingError as exc:
        raise StartupError(str(exc)) from None


def configure_requests(runtime: Runtime) -> None:
    """After the agent is built: its thinking choice, [1m] models and metadata."""
    config = runtime.agent.config
    config.thinking = runtime.thinking
    config.long_context_models = runtime.long_context_models  # the set itself: it grows
    config.metadata = lambda: {"user_id": user_id(runtime.session.id)}
    config.model_check = lambda model: check_model(runtime, model)
    runtime.hooks.effort = runtime.thinking.effort
    for note in runtime.agent.request_settings().notes:
        runtime.emit_notice(note, "info")


def describe(runtime: Runtime) -> str:
    """The model and how it thinks, for /model: "claude-opus-5-5 (effort medium)"."""
    settings = runtime.agent.request_settings()
    details = []
    if settings.effort is not None:
        details.append(f"effort {settings.effort}")
    if settings.thinking["type"] == "disabled":
        details.append("thinking off")
    elif settings.budget is not None:
        details.append(f"thinking budget {settings.budget:,}")
    if runtime.model_name.opusplan:
        details.append("opusplan")
    if runtime.agent.model in runtime.long_context_models:
        details.append("1M context")
    model = runtime.agent.model
    return f"{model} ({', '.join(details)})" if details else model


def long_context_limits(limits: ModelLimits) -> ModelLimits:
    return ModelLimits(max(limits.context_window, LONG_CONTEXT_WINDOW), limits.max_output)


async def check_model(runtime: Runtime, model: str) -> str | None:
    """Why ``model`` cannot be used, or None: the table knows it, the Models API serves it,
    or the Models API could not be asked (the request itself will tell)."""
    if os.environ.get("CCX_SKIP_MODELS_API"):
        return None
    if await model_exists(runtime.agent.client.client, model) is not False:
        return None
    return f"Unknown model {model!r}: the API does not serve it. Use {ALIAS_HINT}."


def user_id(session_id: str) -> str:
    """``metadata.user_id``: which device and session a request comes from (no account)."""
    return json.dumps(
        {"device_id": device_id(), "account_uuid": "", "session_id": session_id},
        separators=(",", ":"),
    )


_devices: dict[str, str] = {}  # config folder -> its device id, read once


def device_id() -> str:
    """A random id for this machine's ccx, made once and kept in the config folder (a folder
    that cannot be written gets one for this process)."""
    path = config_dir() / DEVICE_ID_FILE
    if (known := _devices.get(str(path))) is not None:
        return known
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if not DEVICE_ID.match(text):
        text = secrets.token_hex(32)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text + "\n", encoding="ascii")
        except OSError as exc:
            log.info("cannot keep the device id in %s: %s", path, exc)
    _devices[str(path)] = text
    return text
