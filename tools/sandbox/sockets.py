"""The user's session sockets a sandboxed command must not reach, and the variables naming them.

A Unix socket is a door out of any filesystem sandbox: ``tmux run-shell``
through the user's tmux server, ``ssh-add -L`` / signing with the SSH agent,
``systemd-run --user`` or ``gdbus`` on the session bus, ``docker run -v
/:/host`` on the Docker socket, terminal and editor remote control (kitty,
WezTerm, Alacritty, Neovim, VS Code's IPC) all run or sign things outside.
Under bubblewrap the folders that hold them are covered with an empty private
tmpfs and single sockets with ``/dev/null``; the variables that point at them
are removed from the command's environment under every backend.

What exists when the session starts is found; a server started later in a new
folder is not hidden (its variable still is). Abstract sockets (X11's
``@/tmp/.X11-unix/X0``) are not files: with the network on, bubblewrap leaves
them reachable; Landlock (ABI >= 6) scopes them to the sandbox.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

# Variables whose value names a socket (or an agent behind one); never passed to a command.
SOCKET_VARIABLES = (
    "TMUX", "TMUX_PANE", "STY", "ZELLIJ", "ZELLIJ_SESSION_NAME",
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
    "KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET", "ALACRITTY_SOCKET", "NVIM", "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "EMACS_SOCKET_NAME", "DOCKER_HOST",
)  # fmt: skip
# Folders of session services, per user ({uid}); each is hidden whole when it exists.
_FOLDERS = (
    "/run/user/{uid}", "/tmp/tmux-{uid}", "/tmp/emacs{uid}", "/tmp/.X11-unix", "/tmp/.ICE-unix",
    "/run/screen", "/var/run/screen",
)  # fmt: skip
_GLOBS = ("/tmp/ssh-*", "/tmp/kitty-*", "/tmp/nvim*", "/tmp/vscode-*.sock", "/tmp/.s.PGSQL.*")
_FILES = ("/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock")
_HOME_FOLDERS = (".gnupg", ".screen", ".docker/run")
_TEMP_SCAN_LIMIT = 2_000  # entries of the temp folder looked at for sockets


def scrub_environment(env: Mapping[str, str], allowed: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without the variables that lead to the user's session sockets."""
    keep = set(allowed)
    return {k: v for k, v in env.items() if k not in SOCKET_VARIABLES or k in keep}


def session_sockets(
    env: Mapping[str, str], uid: int | None = None, home: Path | None = None
) -> list[Path]:
    """Folders and socket files to hide: the usual places, what ``env`` names, and every
    socket directly in the temp folders or one folder below them. Existing paths only."""
    uid = os.getuid() if uid is None else uid
    home = home if home is not None else Path(os.path.expanduser("~"))
    found: list[str] = [p.format(uid=uid) for p in _FOLDERS]
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime:
        found.append(runtime)
    tmux_tmp = env.get("TMUX_TMPDIR")
    if tmux_tmp:
        found.append(os.path.join(tmux_tmp, f"tmux-{uid}"))
    for pattern in _GLOBS:
        found += glob.glob(pattern)
    found += _FILES
    found += [str(home / folder) for folder in _HOME_FOLDERS]
    for name in ("SSH_AUTH_SOCK", "TMUX", "KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET",
                 "ALACRITTY_SOCKET", "NVIM", "NVIM_LISTEN_ADDRESS", "VSCODE_IPC_HOOK_CLI",
                 "EMACS_SOCKET_NAME"):  # fmt: skip
        path = _socket_path(env.get(name, ""))
        if path:
            found.append(path)
    bus = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    for part in bus.split(";"):
        for field in part.split(","):
            if field.startswith("unix:path="):
                found.append(field[len("unix:path=") :])
    for temp in dict.fromkeys(["/tmp", "/var/tmp", env.get("TMPDIR") or "/tmp"]):
        found += _sockets_in(temp)
    return _existing(found)


def _socket_path(value: str) -> str:
    """The socket file a variable names: TMUX is "path,pid,index"; others may be "unix:path"."""
    value = value.split(",", 1)[0].strip()
    if value.startswith("unix:"):
        value = value[len("unix:") :]
    return value if value.startswith("/") else ""


def _sockets_in(folder: str) -> list[str]:
    """Sockets directly in ``folder`` and in its subfolders (one level), e.g. /tmp/x/agent.1."""
    found: list[str] = []
    seen = 0
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return found
    for entry in entries:
        seen += 1
        if seen > _TEMP_SCAN_LIMIT:
            break
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISSOCK(mode):
            found.append(entry.path)
        elif stat.S_ISDIR(mode):
            try:
                with os.scandir(entry.path) as inner:
                    for item in inner:
                        seen += 1
                        if seen > _TEMP_SCAN_LIMIT:
                            break
                        if _is_socket(item):
                            found.append(entry.path)  # hide the folder: its sockets may change
                            break
            except OSError:
                continue
    return found


def _is_socket(entry: os.DirEntry[str]) -> bool:
    try:
        return stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False


def _existing(paths: list[str]) -> list[Path]:
    seen: dict[str, None] = {}
    for path in paths:
        if path and os.path.lexists(path):
            seen.setdefault(os.path.normpath(path))
    return [Path(p) for p in seen]
