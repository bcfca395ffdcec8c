"""File checkpoints: each file's content before a prompt's first edit of it, to rewind to.

The Agent SDK's ``rewind_files`` (with ``enable_file_checkpointing``) puts the
files back as they were when a given user prompt was sent. Before Edit or
Write changes a file, its bytes (or its absence) are kept under the prompt
being answered, once per prompt and file; rewinding to a prompt restores every
file changed since, to the earliest state kept from that prompt on. Bash's own
writes are not tracked (as in Claude Code).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tools.atomic_file import atomic_write


class FileCheckpoints:
    def __init__(self) -> None:
        self._kept: dict[str, dict[str, bytes | None]] = {}  # prompt uuid -> path -> before

    def before_write(self, prompt: str, path: str | os.PathLike[str]) -> None:
        """Keep ``path`` as it is now, unless this prompt kept it already."""
        kept = self._kept.setdefault(prompt, {})
        key = os.path.normpath(os.path.abspath(path))
        if key in kept:
            return
        try:
            kept[key] = Path(key).read_bytes()
        except FileNotFoundError:
            kept[key] = None
        except OSError:
            return  # unreadable: the edit fails on it too

    def changed_since(self, prompt: str, prompts: Sequence[str]) -> list[str]:
        """The files ``rewind`` would restore for ``prompt`` (none when it is not in the list)."""
        if prompt not in prompts:
            return []
        later = prompts[list(prompts).index(prompt) :]
        return sorted({path for uuid in later for path in self._kept.get(uuid, {})})

    def rewind(self, prompt: str, prompts: Sequence[str]) -> list[str]:
        """Restore the files changed since ``prompt`` (``prompts``: the conversation's, in
        order); the paths restored. ValueError for a prompt that is not in the list."""
        if prompt not in prompts:
            raise ValueError(f"no user message {prompt} in this session")
        earliest: dict[str, bytes | None] = {}
        later = list(prompts[prompts.index(prompt) :])
        for uuid in later:
            for path, before in self._kept.get(uuid, {}).items():
                earliest.setdefault(path, before)
        for path, before in earliest.items():
            if before is None:
                Path(path).unlink(missing_ok=True)
            else:
                atomic_write(Path(path), before)
        for uuid in later:
            self._kept.pop(uuid, None)
        return sorted(earliest)
