"""find and tar: programs whose command lines are not plain options, read by their own rules.

find is read-only when its expression has no action that deletes, writes a file or runs a
program; tar only when it lists an archive, without the options that run programs
(checkpoint actions, compressors, volume scripts, a remote shell) or write side files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.shell.options import Arg, parse, spec
from agent.shell.part import LITERAL

FIND_DANGEROUS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls", "-fprint", "-fprint0", "-fprintf"}
)
# Primaries and their number of arguments.
FIND_PRIMARIES = {
    **dict.fromkeys(
        [
            "-amin",
            "-anewer",
            "-atime",
            "-cmin",
            "-cnewer",
            "-ctime",
            "-fstype",
            "-gid",
            "-group",
            "-ilname",
            "-iname",
            "-inum",
            "-ipath",
            "-iregex",
            "-iwholename",
            "-links",
            "-lname",
            "-mmin",
            "-mtime",
            "-name",
            "-newer",
            "-path",
            "-perm",
            "-regex",
            "-samefile",
            "-size",
            "-type",
            "-uid",
            "-used",
            "-user",
            "-wholename",
            "-xtype",
            "-context",
            "-printf",
            "-maxdepth",
            "-mindepth",
            "-regextype",
            "-files0-from",
        ],
        1,
    ),
    **dict.fromkeys(
        [
            "-empty",
            "-executable",
            "-false",
            "-nogroup",
            "-nouser",
            "-readable",
            "-true",
            "-writable",
            "-print",
            "-print0",
            "-ls",
            "-prune",
            "-quit",
            "-daystart",
            "-depth",
            "-d",
            "-follow",
            "-help",
            "--help",
            "-ignore_readdir_race",
            "-noignore_readdir_race",
            "-mount",
            "-noleaf",
            "-version",
            "--version",
            "-warn",
            "-nowarn",
            "-xdev",
            "(",
            ")",
            "!",
            ",",
            "-a",
            "-and",
            "-o",
            "-or",
            "-not",
        ],
        0,
    ),
}
_NEWER_XY = re.compile(r"-newer[aBcm][aBcmt]")
_FIND_LEADING = frozenset({"-H", "-L", "-P"})


def find_read_only(args: Sequence[Arg]) -> bool:
    """``find [-H|-L|-P] [-D opts] [-Olevel] [paths...] [expression]``."""
    if any(a.kind != LITERAL for a in args):
        return False  # a glob could expand to -delete
    words = [a.value for a in args]
    i = 0
    while i < len(words) and (words[i] in _FIND_LEADING or words[i].startswith("-O")):
        i += 1
    if i < len(words) and words[i] == "-D":
        i += 2
    while i < len(words) and not (words[i].startswith("-") or words[i] in ("(", "!", ")", ",")):
        i += 1  # starting points
    while i < len(words):
        word = words[i]
        if word in FIND_DANGEROUS:
            return False
        arity = FIND_PRIMARIES.get(word, 1 if _NEWER_XY.fullmatch(word) else None)
        if arity is None or (arity and i + arity >= len(words)):
            return False  # unknown, or its argument is missing
        i += 1 + arity
    return True


_TAR = spec(
    "AcdrtuxF:I:f:vzjJaOC:T:X:b:BiklmopPRsSUWhH:K:L:MN:V:g:G",
    "list file= verbose gzip gunzip ungzip bzip2 xz lzip lzma lzop zstd auto-compress "
    "to-stdout directory= files-from= exclude= exclude-from= exclude-vcs exclude-vcs-ignores "
    "exclude-caches exclude-caches-all exclude-caches-under exclude-tag= exclude-tag-all= "
    "exclude-tag-under= wildcards no-wildcards wildcards-match-slash no-wildcards-match-slash "
    "anchored no-anchored ignore-case no-ignore-case recursion no-recursion null no-null "
    "verbatim-files-from no-verbatim-files-from numeric-owner full-time utc absolute-names "
    "block-number blocking-factor= record-size= ignore-zeros read-full-records occurrence=? "
    "strip-components= transform= xform= show-transformed-names quoting-style= quote-chars= "
    "no-quote-chars= force-local totals=? warning= format= show-defaults starting-file= "
    "sparse sparse-version= one-file-system xattrs no-xattrs acls no-acls selinux no-selinux "
    "checkpoint=? label= multi-volume tape-length= help usage version dereference "
    "hard-dereference seek no-seek checkpoint-action= to-command= use-compress-program= "
    "info-script= new-volume-script= rsh-command= rmt-command= index-file= "
    "listed-incremental= incremental volno-file= create extract get append update "
    "concatenate catenate delete diff compare test-label interactive confirmation",
    dangerous="--checkpoint-action --to-command -I --use-compress-program -F --info-script "
    "--new-volume-script --rsh-command --rmt-command --index-file -g --listed-incremental "
    "--volno-file -M --multi-volume",
)
_TAR_MODES = frozenset(
    [
        "-A",
        "-c",
        "-d",
        "-r",
        "-u",
        "-x",
        "--create",
        "--extract",
        "--get",
        "--append",
        "--update",
        "--concatenate",
        "--catenate",
        "--delete",
        "--diff",
        "--compare",
        "--test-label",
    ]
)
_TAR_NEEDS_VALUE = frozenset("fFICTXbHKLNVg")


def tar_read_only(args: Sequence[Arg]) -> bool:
    """``tar -t`` / ``tar --list`` (also the old ``tar tvf x.tar``) with harmless options."""
    words = list(args)
    if words and words[0].kind == LITERAL and words[0].value[:1] not in ("-", ""):
        words = _old_style(words)  # tar tvf x.tar: letters first, their values after
    parsed = parse(_TAR, words)
    if parsed is None or parsed.dangerous or parsed.unknown_in_options:
        return False
    if any(name in _TAR_MODES for name, _ in parsed.options):
        return False
    if not parsed.has("-t", "--list"):
        return False
    archives = parsed.values("-f", "--file")
    remote = any(":" in a for a in archives) and not parsed.has("--force-local")
    return not remote and not parsed.has("-w", "--interactive", "--confirmation")


def _old_style(words: list[Arg]) -> list[Arg]:
    letters, rest = words[0].value, words[1:]
    out: list[Arg] = []
    for letter in letters:
        if letter in _TAR_NEEDS_VALUE and rest:
            out.extend([Arg("-" + letter), rest.pop(0)])
        else:
            out.append(Arg("-" + letter))
    return out + rest
