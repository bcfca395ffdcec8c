"""The start-up caches a front end uses and keeps: what the last start of this code
compiled or generated, read before it is needed and written once the session is up.

Three things are the same from one start to the next and cost ~0.15 s of CPU before the
app's first figure or a cold `-p`'s first request: the compiled code of the modules a start
imports, found and read one by one (``agent.core.code_bundle``, a file per front end, as each
imports its own set), the methods ``@dataclass`` writes for the classes the session imports
(``agent.core.dataclass_code``, a table per front end) and the tools' JSON schemas
(``tui.session.tool_schema_cache``, one file for both, under a fingerprint of the code). A
cache that cannot be read or written only costs that time; nothing else depends on it.
"""

from __future__ import annotations

import logging

from agent.core import code_bundle, dataclass_code
from agent.core.locations import config_dir
from tui.session.tool_schema_cache import ToolSchemaCache

log = logging.getLogger(__name__)


class StartUpCaches:
    def __init__(self, front_end: str) -> None:
        self.front_end = front_end  # "app" or "headless": whose dataclass table
        self._schemas: ToolSchemaCache | None = None

    def use(self) -> None:
        """All three, before the session's modules are imported (a headless run)."""
        self.use_compiled_code()
        self.use_tool_schemas()

    def use_compiled_code(self) -> None:
        """Before the modules it serves are imported (once a process): their code and their
        dataclasses' methods, as the last start of this front end compiled them."""
        config = config_dir()
        code_bundle.install(code_bundle.cache_file(config, self.front_end))
        dataclass_code.install(dataclass_code.cache_file(config, self.front_end))

    def use_tool_schemas(self) -> None:
        """Before the session's tools are built (once)."""
        if self._schemas is not None:
            return
        self._schemas = ToolSchemaCache(config_dir())
        try:
            self._schemas.use()
        except Exception:  # only time is lost: the schemas are generated instead
            log.exception("reading the tools' schemas failed")

    def keep(self) -> None:
        """What this start compiled or generated anew, for the next one (nothing is
        written when the caches held it all)."""
        try:
            code_bundle.save()
            dataclass_code.save()
            if self._schemas is not None:
                self._schemas.keep()
        except Exception:
            log.exception("keeping the start-up caches failed")
