"""Which files a simple shell command may read or write, and which options make it run code.

The permission gate needs these facts about a command beyond "is it read-only":

- ``read_candidates``: every word that could name a file the command reads
  (operands, ``--opt=FILE`` values, ``if=FILE``, ``@FILE``, ``rev:path``), so
  a ``Read(...)`` deny rule also stops ``cat .env``, ``grep . .env`` or
  ``git show HEAD:.env``. Over-inclusive on purpose: a word that is not a
  path simply matches no rule.
- ``write_targets``: files written by programs rather than redirections
  (``tee``, ``cp``/``mv``/``install``/``ln`` targets, ``sed -i``, ``dd of=``,
  ``touch``, ``truncate``, ``git config``...), for protected paths.
- ``runs_code_option``: an option that turns an allowed program into a
  runner of something else (``npm test --script-shell=./evil.sh``, ``git -c``,
  ``rg --pre``), which a wildcard allow rule must not vouch for.
- ``recursive_reader``: whether directory operands are read all the way down.
"""

from __future__ import annotations

from agent.shell.part import CommandPart

# Programs that print or test their arguments, or change a file's name-level metadata,
# without opening its content (mv, cp and ln do count as reading: they carry it elsewhere).
NON_READERS = frozenset(
    {"echo", "printf", "true", "false", "basename", "dirname", "seq", "date", "pwd", "whoami",
     "id", "uname", "which", "type", "test", "[", "[[", "cd", "pushd", "popd", "sleep", "export",
     "command", "hash", "umask", "expr", "yes", "hostname", "mkdir", "rmdir", "rm", "touch",
     "chmod", "chown", "chgrp", "ls", "stat", "du", "readlink", "realpath"}
)  # fmt: skip
# Options (long ones matched by unique prefix) that make a program run another program or
# write a file of the caller's choosing.
RUNS_CODE_OPTIONS: dict[str, tuple[str, ...]] = {
    "npm": ("--script-shell", "--node-options", "--userconfig", "--globalconfig", "--call",
            "--prefix", "--workspace", "--workspaces", "-w"),
    "npx": ("--script-shell", "--node-options", "--userconfig", "--call", "--package"),
    "pnpm": ("--script-shell", "--node-options", "--shell-emulator"),
    "yarn": ("--script-shell", "--node-options"),
    "git": ("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree", "-C", "--output",
            "--upload-pack", "--receive-pack", "--exec", "--open-files-in-pager", "-O",
            "--ext-diff", "--textconv"),
    "rg": ("--pre", "--pre-glob"),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
             "-fls"),
    "sort": ("--compress-program", "--output", "-o"),
    "tar": ("--checkpoint-action", "--to-command", "--use-compress-program", "-I",
            "--info-script", "--new-volume-script", "-F", "--rsh-command"),
    "make": ("--eval", "-E", "SHELL="),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "zip": ("-T", "--test", "-TT", "--unzip-command"),
}  # fmt: skip
RECURSIVE_FLAGS: dict[str, tuple[str, ...]] = {
    "grep": ("-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse"),
    "egrep": ("-r", "-R", "--recursive"),
    "fgrep": ("-r", "-R", "--recursive"),
    "cp": ("-r", "-R", "-a", "--recursive", "--archive"),
    "zip": ("-r", "--recurse-paths"),
}
ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "rsync", "du", "git", "zip", "scp"})
_COPY_LIKE = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_EACH_OPERAND = frozenset({"tee", "touch", "truncate", "rm", "chmod", "chown", "chgrp", "shred",
                           "unlink", "mkdir", "rmdir", "mkfifo", "mknod"})  # fmt: skip


def program(part: CommandPart) -> str:
    return part.words[0].rsplit("/", 1)[-1] if part.words else ""


def read_candidates(part: CommandPart) -> list[str]:
    """Every word of ``part`` that might name a file it reads (see the module docstring)."""
    if not part.words or program(part) in NON_READERS:
        return list(part.reads)
    found: list[str] = list(part.reads)
    for word in part.words[1:]:
        if word.startswith("--"):
            if "=" in word:
                found.append(word.split("=", 1)[1])
            continue
        if word.startswith("-") and word != "-":
            continue
        found.append(word)
        if "=" in word:
            found.append(word.split("=", 1)[1])
        if word.startswith("@"):
            found.append(word[1:])
        if ":" in word and not word.startswith("/"):
            found.append(word.rsplit(":", 1)[1])
    return [f for f in dict.fromkeys(found) if f]


def write_targets(part: CommandPart) -> list[str]:
    """Files the program itself writes (redirections are ``part.writes``)."""
    name, args = program(part), list(part.words[1:])
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    targets: list[str] = []
    if name in _EACH_OPERAND:
        targets += operands
    elif name in _COPY_LIKE:
        targets += _option_values(args, ("-t", "--target-directory"))
        if operands:
            targets.append(operands[-1])
    elif name in ("sed", "perl") and any(_is_in_place(a) for a in args):
        targets += operands[1:] if name == "sed" else operands
    elif name == "dd":
        targets += [a[3:] for a in args if a.startswith("of=")]
    elif name == "git" and "config" in args and not _git_config_reads(args):
        targets.append("~/.gitconfig" if "--global" in args else ".git/config")
    elif name in ("curl", "wget"):
        targets += _option_values(args, ("-o", "--output", "-O", "--output-document"))
    return [t for t in targets if t]


def runs_code_option(part: CommandPart) -> str | None:
    """The option in ``part`` that makes it run or write something else, if any."""
    options = RUNS_CODE_OPTIONS.get(program(part))
    if not options:
        return None
    longs = [o for o in options if o.startswith("--")]
    for word in part.words[1:]:
        if word == "--":
            break
        head = word.split("=", 1)[0]
        if head in options:
            return word
        if word.startswith("--") and len(head) > 2:
            if any(o.startswith(head) for o in longs):  # getopt takes unique prefixes
                return word
        elif word.startswith("-") and not word.startswith("--"):
            shorts = [o for o in options if len(o) == 2 and o[0] == "-"]
            if any(o[1] in word[1:] for o in shorts):
                return word
        elif any(o.endswith("=") and word.startswith(o) for o in options):
            return word
    return None


def recursive_reader(part: CommandPart) -> bool:
    name = program(part)
    if name in ALWAYS_RECURSIVE:
        return True
    flags = RECURSIVE_FLAGS.get(name, ())
    for word in part.words[1:]:
        if word in flags:
            return True
        short = word.startswith("-") and not word.startswith("--")
        if short and any(len(f) == 2 and f[1] in word[1:] for f in flags):
            return True
    return False


def _is_in_place(arg: str) -> bool:
    if arg.startswith("--in-place"):
        return True
    return arg.startswith("-") and not arg.startswith("--") and "i" in arg[1:]


def _option_values(args: list[str], names: tuple[str, ...]) -> list[str]:
    values = []
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                values.append(args[index + 1])
            elif name.startswith("--") and arg.startswith(name + "="):
                values.append(arg.split("=", 1)[1])
            elif not name.startswith("--") and arg.startswith(name) and len(arg) > len(name):
                values.append(arg[len(name) :])
    return values


def _git_config_reads(args: list[str]) -> bool:
    reading = ("--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "get")
    if any(a in reading or a.startswith("--get") for a in args):
        return True
    index = args.index("config")
    rest = [a for a in args[index + 1 :] if not a.startswith("-")]
    return len(rest) <= 1  # `git config key` reads the key; `git config key value` writes it
