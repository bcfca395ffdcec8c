"""A headless run's start-up caches: what the last `-p` or stream-json run of this code
compiled or generated, used before the session's imports and kept when the run ends.

Two things are the same from one start to the next and cost a cold `-p` ~0.1 s of CPU
before its first request: the methods ``@dataclass`` writes for the classes the session
imports (``agent.core.dataclass_code``, a table of its own: the app keeps another) and
the tools' JSON schemas (``tui.session.tool_schema_cache``, one file for both front ends,
under a fingerprint of the code). A cache that cannot be read or written only costs that
time; nothing else depends on it.
"""

from __future__ import annotations

import logging

from agent.core import dataclass_code
from agent.core.locations import config_dir
from tui.session.tool_schema_cache import ToolSchemaCache

log = logging.getLogger(__name__)

FRONT_END = "headless"


class StartUpCaches:
    def __init__(self) -> None:
        self._schemas: ToolSchemaCache | None = None

    def use(self) -> None:
        """Before the session's modules are imported (their dataclasses are made then)."""
        config = config_dir()
        dataclass_code.install(dataclass_code.cache_file(config, FRONT_END))
        self._schemas = ToolSchemaCache(config)
        try:
            self._schemas.use()
        except Exception:  # only time is lost: the schemas are generated instead
            log.exception("reading the tools' schemas failed")
            self._schemas = None

    def keep(self) -> None:
        """What this run compiled or generated anew, for the next one (nothing when the
        caches held it all)."""
        try:
            dataclass_code.save()
            if self._schemas is not None:
                self._schemas.keep()
        except Exception:
            log.exception("keeping the start-up caches failed")
