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

``SessionModel`` holds the choice while the session runs: /model switches it,
the permission mode picks opusplan's half, and the Models API's figures for a
model are kept once fetched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets

from agent.core.locations import config_dir
from agent.loop.agent import Agent
from agent.model import limits_cache
from agent.model.catalog import (
    LONG_CONTEXT_WINDOW,
    ModelLimits,
    ModelName,
    fetch_limits,
    limits_for,
    model_exists,
)
from agent.model.client import ApiError, ModelClient
from agent.model.thinking import ThinkingChoice, ThinkingError, choose
from agent.permissions.settings import Settings
from tui.session.options import RunOptions, StartupError

log = logging.getLogger(__name__)

DEVICE_ID_FILE = "device_id"
DEVICE_ID = re.compile(r"^[0-9a-f]{64}$")
ALIAS_HINT = "opus, sonnet, haiku, fable, opusplan, best, default, or a full model id"


class SessionModel:
    """The model the session uses, as the user named it, and how it thinks."""

    def __init__(self, name: ModelName, thinking: ThinkingChoice, in_plan: bool) -> None:
        self.long_context: set[str] = set()  # models named with [1m]; the agent reads this set
        self.fetched: dict[str, ModelLimits] = {}  # the Models API's figures, once fetched
        self._refreshing: asyncio.Future[None] | None = None
        if name.long_context:
            self.long_context.add(name.id)
        self.name = name
        self.thinking = thinking
        self.current = name.for_mode(in_plan)  # the model requests are sent with

    def parse(self, typed: str) -> ModelName:
        """``typed`` resolved; a model named with [1m] gets the 1M window from now on."""
        name = ModelName.parse(typed)
        if name.long_context:
            self.long_context.add(name.id)
        return name

    def switch(self, typed: str, effort: str | None, in_plan: bool) -> str:
        """/model NAME [EFFORT]: the new choice, and the model to send now (ThinkingError for
        a bad effort, and then nothing changed)."""
        choice = self.thinking.with_effort(effort) if effort is not None else self.thinking
        self.name, self.thinking = self.parse(typed), choice
        return self.name.for_mode(in_plan)

    def use(self, model: str) -> None:
        """Send ``model`` from now on (opusplan's other half, a new choice)."""
        self.current = model

    def limits_for(self, model: str) -> ModelLimits:
        """The Models API's figures when they were fetched, else the static table's (a model
        named with [1m] gets the 1M window)."""
        limits = self.known_limits(model)
        if model in self.long_context:
            return long_context_limits(limits)
        return limits

    def known_limits(self, model: str) -> ModelLimits:
        """The Models API's figures when they were fetched, else the static table's."""
        return self.fetched.get(model) or limits_for(model)

    async def refresh_limits(self, client: ModelClient) -> None:
        """The current model's limits from the Models API, once a model (and cached across
        sessions)."""
        model = self.current
        if model in self.fetched or os.environ.get("CCX_SKIP_MODELS_API"):
            return
        cached = limits_cache.load(config_dir(), model)
        if cached is not None:
            self.fetched[model] = cached
            return
        if limits_cache.failed_recently(config_dir(), model):
            return  # the table's figures, as when the lookup fails
        try:
            sdk = await client.ready_client()
        except ApiError:
            return  # no key yet: the request itself will say why
        limits = await fetch_limits(sdk, model)
        if limits is not None:
            self.fetched[model] = limits
            limits_cache.store(config_dir(), model, limits)
        else:
            limits_cache.store_failure(config_dir(), model)

    def refresh_limits_meanwhile(self, client: ModelClient) -> None:
        """``refresh_limits`` in the background: a new conversation's first request fits the
        table's figures, so it need not wait for the Models API's round trip."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self.refresh_limits(client))
            self._refreshing.add_done_callback(_log_failure)

    async def aclose(self) -> None:
        """A background refresh still waiting is stopped."""
        if (task := self._refreshing) is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    def describe(self, agent: Agent) -> str:
        """The model and how it thinks, for /model: "claude-opus-5-5 (effort medium)"."""
        settings = agent.request_settings()
        details = []
        if settings.effort is not None:
            details.append(f"effort {settings.effort}")
        if settings.thinking["type"] == "disabled":
            details.append("thinking off")
        elif settings.budget is not None:
            details.append(f"thinking budget {settings.budget:,}")
        if self.name.opusplan:
            details.append("opusplan")
        if agent.model in self.long_context:
            details.append("1M context")
        model = agent.model
        return f"{model} ({', '.join(details)})" if details else model


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.warning("reading the model's limits failed: %s", error)


def chosen_model(options: RunOptions, settings: Settings) -> ModelName:
    """The model the session starts with, as named (aliases resolved)."""
    return ModelName.parse(options.model or settings.model or os.environ.get("ANTHROPIC_MODEL"))


def fallback_model(options: RunOptions, settings: Settings) -> str | None:
    """``--fallback-model`` or the setting ``fallbackModel``, resolved (the first of a list)."""
    typed = options.fallback_model or settings.fallback_model
    first = (typed or "").split(",")[0].strip()
    return ModelName.parse(first).id if first else None


def thinking_choice(options: RunOptions, settings: Settings) -> ThinkingChoice:
    """Thinking and effort from the flags, the environment and the settings (StartupError for
    values that cannot be used)."""
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


def long_context_limits(limits: ModelLimits) -> ModelLimits:
    return ModelLimits(max(limits.context_window, LONG_CONTEXT_WINDOW), limits.max_output)


async def check_model(client: ModelClient, model: str) -> str | None:
    """Why ``model`` cannot be used, or None: the table knows it, the Models API serves it,
    or the Models API could not be asked (the request itself will tell)."""
    if os.environ.get("CCX_SKIP_MODELS_API"):
        return None
    try:
        sdk = await client.ready_client()
    except ApiError:
        return None  # no key yet: the request itself will say why
    if await model_exists(sdk, model) is not False:
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
