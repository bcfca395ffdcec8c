"""Settings files as Claude Code reads them, merged.

In increasing priority: the user's (``~/.claude/settings.json``, then ccx's own
``$CCX_CONFIG_DIR/settings.json``, default ``~/.ccx/settings.json``), the
project's ``.claude/settings.json``, its ``.claude/settings.local.json``,
``--settings`` (a file or JSON), and last the machine's managed policy file
(``managed_settings_file``), which nothing overrides. Permission rule lists and
hooks add up across sources (each rule remembers where it came from); every
other key is taken from the highest-priority source that sets it, dicts merged
shallowly. ``permissions.disableBypassPermissionsMode: "disable"`` holds when
any source says so. A broken file is reported in ``Settings.warnings`` and
skipped, never raised.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from agent.core.locations import config_dir
from agent.permissions.rules import MODES, PermissionMode, Rule, is_permission_mode
from tools.atomic_file import atomic_write

# A value as a settings file holds it: what ``json.loads`` gives.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None

RULE_LISTS = ("allow", "ask", "deny")
# What a project's settings may set before the folder is trusted (agent.permissions.trust): rules that
# only restrict, and keys that neither run anything nor loosen a check.
RESTRICTING_RULES = ("deny", "ask", "disableBypassPermissionsMode")
HARMLESS_KEYS = frozenset(
    {"$schema", "model", "fallbackModel", "autoCompactWindow", "outputStyle"}  # words, no commands
)
# Where the machine's policy lives (Claude Code's paths); the variable moves it, for tests.
MANAGED_FILES = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}
MANAGED_ENV = "CCX_MANAGED_SETTINGS_FILE"
# The kinds of source, lowest priority first; --setting-sources names the first three.
SOURCES = ("user", "project", "local")
KINDS = ("user", "project", "local", "flag", "managed")
FLAG_LABEL = "--settings"


@dataclass(frozen=True)
class SettingsSource:
    """One source that was read: its kind (``KINDS``), its label (the file's path, or
    ``--settings``) and its object as it applies (an untrusted project's trimmed)."""

    kind: str
    label: str
    data: dict[str, Any]
    written: dict[str, Any]  # the object as written, for the unknown-key check


@dataclass
class Settings:
    raw: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # the files that were read, lowest first
    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    # Project files whose hooks, env, allow rules... were left out: the folder is not trusted.
    untrusted_ignored: list[Path] = field(default_factory=list)
    # Which source set each top-level key last (hooks: every file that added some).
    origins: dict[str, str] = field(default_factory=dict)
    # Hook commands a project's file configures: they run in the Bash sandbox.
    project_hook_commands: set[str] = field(default_factory=set)
    sources: list[SettingsSource] = field(default_factory=list)  # lowest priority first
    managed_hooks: dict[str, list[Any]] = field(default_factory=dict)

    def kind_of(self, label: str) -> str | None:
        """The kind of the source ``label`` names (user, project, local, flag, managed)."""
        return next((s.kind for s in self.sources if s.label == label), None)

    def origin_kind(self, key: str) -> str | None:
        origin = self.origins.get(key)
        return self.kind_of(origin) if origin is not None else None

    def from_project(self, key: str) -> bool:
        """Whether the value of ``key`` comes from a project's settings file."""
        return self.origin_kind(key) in ("project", "local")

    def get(self, key: str, default: JsonValue = None) -> JsonValue:
        """The value of ``key`` as written (the caller checks its type), else ``default``."""
        value: JsonValue = self.raw.get(key, default)
        return value

    @property
    def model(self) -> str | None:
        return _string(self.raw.get("model"))

    @property
    def fallback_model(self) -> str | None:
        return _string(self.raw.get("fallbackModel"))

    @property
    def permission_mode(self) -> PermissionMode | None:
        mode = self._permissions.get("defaultMode")
        return mode if is_permission_mode(mode) else None

    @property
    def bypass_disabled_by(self) -> str | None:
        """The source that turns bypassPermissions off ("disable" anywhere holds), or None."""
        for source in reversed(self.sources):
            permissions = source.data.get("permissions")
            if isinstance(permissions, dict) and (
                permissions.get("disableBypassPermissionsMode") == "disable"
            ):
                return source.label
        return None

    @property
    def hooks_disabled_by(self) -> str | None:
        """The source whose ``disableAllHooks: true`` is in force, or None."""
        if self.raw.get("disableAllHooks") is True:
            return self.origins.get("disableAllHooks")
        return None

    @property
    def hooks(self) -> dict[str, list[Any]]:
        """The hooks that run: none under a managed ``disableAllHooks``, only the managed
        ones under another source's or under ``allowManagedHooksOnly`` from the policy."""
        disabled = self.hooks_disabled_by
        if disabled is not None and self.kind_of(disabled) == "managed":
            return {}
        if disabled is not None or self._managed_only_hooks:
            return self.managed_hooks
        hooks = self.raw.get("hooks")
        return hooks if isinstance(hooks, dict) else {}

    @property
    def only_managed_hooks(self) -> bool:
        """Whether only the policy's hooks may run (or none): plugins' hooks then do not."""
        return self.hooks_disabled_by is not None or self._managed_only_hooks

    @property
    def _managed_only_hooks(self) -> bool:
        managed = next((s for s in self.sources if s.kind == "managed"), None)
        return managed is not None and managed.data.get("allowManagedHooksOnly") is True

    @property
    def env(self) -> dict[str, str]:
        env = self.raw.get("env")
        if not isinstance(env, dict):
            return {}
        return {str(k): _env_value(v) for k, v in env.items() if v is not None}

    @property
    def managed_env(self) -> dict[str, str]:
        """The policy's ``env``: it wins over the environment ccx starts in."""
        managed = next((s for s in self.sources if s.kind == "managed"), None)
        env = managed.data.get("env") if managed is not None else None
        if not isinstance(env, dict):
            return {}
        return {str(k): _env_value(v) for k, v in env.items() if v is not None}

    @property
    def additional_directories(self) -> list[str]:
        """``permissions.additionalDirectories`` from every source, as written."""
        found: list[str] = []
        for source in self.sources:
            permissions = source.data.get("permissions")
            value = (
                permissions.get("additionalDirectories") if isinstance(permissions, dict) else None
            )
            if isinstance(value, list):
                found += [v for v in value if isinstance(v, str) and v.strip()]
        return list(dict.fromkeys(found))

    @property
    def auto_compact_window(self) -> JsonValue:
        """``autoCompactWindow`` as written (120000, "120k", ...); resolve_window parses it."""
        return self.raw.get("autoCompactWindow")

    @property
    def server_context_editing(self) -> JsonValue:
        """``serverContextEditing`` as written; resolve_server_editing checks it is a bool."""
        return self.raw.get("serverContextEditing")

    @property
    def sandbox(self) -> JsonValue:
        """``sandbox`` as written (Claude Code's object); tui.session.sandbox_setup checks its keys."""
        return self.raw.get("sandbox")

    @property
    def _permissions(self) -> dict[str, Any]:
        permissions = self.raw.get("permissions")
        return permissions if isinstance(permissions, dict) else {}


def project_root(cwd: Path) -> Path:
    """The nearest ancestor of ``cwd`` holding ``.claude/`` or ``.git``, else ``cwd``.

    The home directory's ``.claude/`` does not count: that is Claude Code's user
    configuration, not a project.
    """
    cwd = Path(cwd).resolve()
    home = Path.home().resolve()
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
        if (directory / ".claude").is_dir() and directory != home:
            return directory
    return cwd


def user_settings_files(config_dir_path: Path | None = None) -> list[Path]:
    """The user's settings files, lowest priority first: Claude Code's, then ccx's own."""
    user_dir = config_dir_path if config_dir_path is not None else config_dir()
    return [Path.home() / ".claude" / "settings.json", user_dir / "settings.json"]


def settings_files(cwd: Path, config_dir_path: Path | None = None) -> list[Path]:
    """The user's and project's settings files that apply in ``cwd``, lowest priority first
    (the managed file is ``managed_settings_file``)."""
    return [*user_settings_files(config_dir_path), *project_settings_files(project_root(cwd))]


def project_settings_files(root: Path) -> list[Path]:
    """The project's shared and local settings files, lowest priority first."""
    return [root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]


def managed_settings_file() -> Path | None:
    """The machine's policy file: ``$CCX_MANAGED_SETTINGS_FILE`` when set (tests use it),
    else Claude Code's path for this system (None where it has none)."""
    configured = os.environ.get(MANAGED_ENV)
    if configured:
        return Path(configured).expanduser()
    return MANAGED_FILES.get(sys.platform)


def load_settings(
    cwd: Path,
    config_dir: Path | None = None,
    trusted: bool = True,
    sources: Sequence[str] | None = None,
    flag: dict[str, Any] | None = None,
) -> Settings:
    """The merged settings; with ``trusted`` false, the project's files contribute only what
    ``untrusted_view`` keeps (see agent.permissions.trust); ``sources`` (user, project,
    local) limits which files are read at all (None: every one); ``flag``: the object
    ``--settings`` gave. The managed file is always read, last."""
    settings = Settings()
    seen: set[Path] = set()
    user_files = user_settings_files(config_dir)
    project_files = project_settings_files(project_root(cwd))
    files = [("user", p) for p in user_files]
    files += [("project", project_files[0]), ("local", project_files[1])]
    for kind, path in files:
        if sources is not None and kind not in sources:
            continue
        resolved = path.resolve()
        if resolved in seen:
            continue  # the project is the config dir's parent, e.g. run from ~
        seen.add(resolved)
        data = _read_json(path, settings.warnings)
        if data is None:
            continue
        written = data
        if not trusted and kind != "user":
            data = untrusted_view(data)
            if data != written:
                settings.untrusted_ignored.append(path)
        settings.files.append(path)
        _add_source(settings, SettingsSource(kind, str(path), data, written))
        if kind != "user":
            settings.project_hook_commands |= set(_hook_commands(data.get("hooks")))
    if flag is not None:
        _add_source(settings, SettingsSource("flag", FLAG_LABEL, flag, flag))
    managed = managed_settings_file()
    data = _read_json(managed, settings.warnings) if managed is not None else None
    if managed is not None and data is not None:
        settings.files.append(managed)
        _add_source(settings, SettingsSource("managed", str(managed), data, data))
        hooks = data.get("hooks")
        settings.managed_hooks = dict(hooks) if isinstance(hooks, dict) else {}
    return settings


def _add_source(settings: Settings, source: SettingsSource) -> None:
    settings.sources.append(source)
    merge_settings(settings, source.data, source=source.label)


def _hook_commands(hooks: Any) -> list[str]:
    commands = []
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                    commands.append(entry["command"])
    return commands


def read_settings_arg(value: str) -> dict[str, Any]:
    """``--settings``: inline JSON when it starts with ``{``, else a file's path; ValueError."""
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read {value}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("settings must be a JSON object")
    return data


def untrusted_view(data: dict[str, Any]) -> dict[str, Any]:
    """A project settings file as it applies before the folder is trusted: its deny and
    ask rules and the harmless keys only."""
    view = {k: v for k, v in data.items() if k in HARMLESS_KEYS}
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        kept = {k: v for k, v in permissions.items() if k in RESTRICTING_RULES}
        if kept:
            view["permissions"] = kept
    return view


def add_permission_rule(path: Path, behavior: str, rule: str) -> None:
    """Add ``rule`` to permissions.<behavior> of the settings file at ``path``.

    Creates the file and its directories; keeps every other key; does nothing
    if the rule is already there. The file is replaced atomically, and writers
    in other ccx processes are serialized with a lock on the directory.
    Raises ValueError if the file exists but is not a JSON object (it is not
    overwritten), OSError if it cannot be written.
    """
    if behavior not in RULE_LISTS:
        raise ValueError(f"behavior must be one of {RULE_LISTS}, not {behavior!r}")
    text = str(Rule.parse(rule))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent):
        data = read_settings_object(path)
        permissions = data.setdefault("permissions", {})
        if not isinstance(permissions, dict):
            raise ValueError(f'"permissions" in {path} is not an object; not changed')
        rules = permissions.setdefault(behavior, [])
        if not isinstance(rules, list):
            raise ValueError(f'"permissions.{behavior}" in {path} is not a list; not changed')
        if text in rules or rule in rules:
            return
        rules.append(text)
        atomic_write(
            path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), durable=True
        )


def remove_permission_rule(path: Path, rule: str) -> bool:
    """Remove ``rule`` from every permissions list of the settings file at ``path``; True
    when it was there. Same locking and atomic replacement as ``add_permission_rule``."""
    path = Path(path)
    if not path.exists():
        return False
    text = str(Rule.parse(rule))
    with _directory_lock(path.parent):
        data = read_settings_object(path)
        permissions = data.get("permissions")
        if not isinstance(permissions, dict):
            return False
        removed = False
        for behavior in RULE_LISTS:
            rules = permissions.get(behavior)
            if isinstance(rules, list) and (text in rules or rule in rules):
                permissions[behavior] = [r for r in rules if r not in (text, rule)]
                removed = True
        if removed:
            atomic_write(
                path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), durable=True
            )
        return removed


def read_settings_object(path: Path) -> dict[str, Any]:
    """A settings file's JSON object ({} when there is none), for a writer about to change it;
    ValueError when it is not one."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); not changed") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; not changed")
    return data


def set_setting(path: Path, key: str, value: Any) -> None:
    """Set one top-level key of the settings file at ``path``, keeping the rest (the same
    lock, atomic replace and refusals as ``add_permission_rule``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent):
        data = read_settings_object(path)
        data[key] = value
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        atomic_write(path, text.encode(), durable=True)


def set_setting_entry(path: Path, key: str, entry: str, value: Any) -> None:
    """Set ``entry`` of the object at the top-level ``key`` (``enabledPlugins``...), keeping
    the rest; ``value`` None removes it. ValueError when ``key`` holds something else."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent):
        data = read_settings_object(path)
        inner = data.setdefault(key, {})
        if not isinstance(inner, dict):
            raise ValueError(f'"{key}" in {path} is not an object; not changed')
        if value is None:
            inner.pop(entry, None)
        else:
            inner[entry] = value
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        atomic_write(path, text.encode(), durable=True)


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"Could not read settings file {path}: {exc}; ignoring it.")
        return None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"Settings file {path} is not valid JSON ({exc}); ignoring it.")
        return None
    if not isinstance(data, dict):
        warnings.append(f"Settings file {path} does not hold a JSON object; ignoring it.")
        return None
    return data


def merge_settings(settings: Settings, data: dict[str, Any], source: str) -> None:
    """Merge one more settings object (a file's, or ``--settings``) over what is there."""
    raw = settings.raw
    for key, value in data.items():
        settings.origins[key] = source
        if key == "permissions" and isinstance(value, dict):
            _merge_permissions(settings, value, source)
        elif key == "hooks" and isinstance(value, dict):
            hooks = raw.setdefault("hooks", {})
            for event, entries in value.items():
                if not isinstance(entries, list):
                    settings.warnings.append(f'"hooks.{event}" in {source} is not a list; ignored.')
                    continue
                hooks[event] = [*hooks.get(event, []), *entries]
        elif isinstance(value, dict) and isinstance(raw.get(key), dict):
            raw[key] = {**raw[key], **value}
        else:
            raw[key] = value


def _merge_permissions(settings: Settings, value: dict[str, Any], source: str) -> None:
    merged = settings.raw.setdefault("permissions", {})
    for key, item in value.items():
        if key == "defaultMode" and item not in MODES:
            modes = ", ".join(MODES)
            settings.warnings.append(
                f"Unknown permissions.defaultMode {item!r} in {source} (expected {modes}); ignored."
            )
            continue
        if key not in RULE_LISTS:
            merged[key] = item
            continue
        if not isinstance(item, list):
            settings.warnings.append(f'"permissions.{key}" in {source} is not a list; ignored.')
            continue
        merged[key] = [*merged.get(key, []), *item]
        target: list[Rule] = getattr(settings, key)
        for text in item:
            try:
                if not isinstance(text, str):
                    raise ValueError(f"a rule must be a string, got {text!r}")
                target.append(Rule.parse(text, source=source))
            except ValueError as exc:
                settings.warnings.append(f"Bad permission rule in {source}: {exc}; ignored.")


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
