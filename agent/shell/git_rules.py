"""Which git command lines only read.

Only global options that change nothing are allowed before the subcommand: ``-c``, ``-C``,
``--git-dir``, ``--work-tree``, ``--exec-path``, ``--config-env``... point git at other
configuration (and so at other programs to run) and make the command ask. Each read
subcommand has its own option spec, without the options that write (``--output``) or run
programs (``--ext-diff``, ``--textconv``, a pager, gpg for signatures); branch, tag, remote,
config, stash, worktree and reflog count only in their listing forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agent.shell.options import Arg, OptionSpec, Parsed, spec
from agent.shell.part import LITERAL
from agent.shell.readers import Check, accepts, by_spec

SAFE_GLOBAL_OPTIONS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs",
     "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch",
     "--no-advice"}
)  # fmt: skip

_REVISIONS = (
    "all branches=? tags=? remotes=? glob= exclude= exclude-hidden= reflog alternate-refs "
    "single-worktree ignore-missing bisect stdin cherry-mark cherry-pick left-only right-only "
    "cherry merges no-merges min-parents= max-parents= no-min-parents no-max-parents "
    "first-parent exclude-first-parent-only not since= after= until= before= "
    "since-as-filter= max-age= min-age= author= committer= grep-reflog= grep= all-match "
    "invert-grep regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp "
    "remove-empty max-count= skip= walk-reflogs merge boundary simplify-by-decoration "
    "full-history dense sparse simplify-merges ancestry-path=? show-pulls topo-order "
    "date-order author-date-order reverse no-walk=? do-walk left-right graph "
    "show-linear-break=? follow decorate=? no-decorate decorate-refs= decorate-refs-exclude= "
    "clear-decorations source use-mailmap mailmap no-mailmap no-use-mailmap full-diff "
    "log-size abbrev-commit no-abbrev-commit oneline encoding= expand-tabs=? no-expand-tabs "
    "notes=? no-notes show-notes=? standard-notes no-standard-notes show-signature "
    "relative-date date= parents children pretty=? format= count objects objects-edge "
    "unpacked"
)
_DIFF = (
    "patch no-patch unified= output= output-indicator-new= output-indicator-old= "
    "output-indicator-context= raw patch-with-raw indent-heuristic no-indent-heuristic "
    "minimal patience histogram anchored= diff-algorithm= stat=? compact-summary numstat "
    "shortstat dirstat=? cumulative dirstat-by-file=? summary patch-with-stat name-only "
    "name-status submodule=? color=? no-color color-moved=? no-color-moved color-moved-ws= "
    "no-color-moved-ws word-diff=? word-diff-regex= color-words=? no-renames renames "
    "rename-empty no-rename-empty check ws-error-highlight= full-index binary abbrev=? "
    "no-abbrev break-rewrites=? find-renames=? find-copies=? find-copies-harder "
    "irreversible-delete diff-filter= find-object= pickaxe-all pickaxe-regex skip-to= "
    "rotate-to= relative=? no-relative text ignore-cr-at-eol ignore-space-at-eol "
    "ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= "
    "inter-hunk-context= function-context no-function-context exit-code quiet ext-diff "
    "no-ext-diff textconv no-textconv ignore-submodules=? src-prefix= dst-prefix= no-prefix "
    "default-prefix line-prefix= ita-invisible-in-index ita-visible-in-index stat-width= "
    "stat-name-width= stat-graph-width= stat-count= cc combined-all-paths diff-merges= "
    "no-diff-merges remerge-diff dd"
)
_DIFF_SHORT = "puU:szWwbB::M::C::Dl:S:G:O:RaX::mct"
# Options that write files or run what configuration names (diff drivers, textconv, gpg).
_DIFF_DANGER = "--output --ext-diff --textconv"
_LOG = spec(
    _DIFF_SHORT + "n:iEFPgL:",
    _REVISIONS + " " + _DIFF,
    dangerous=_DIFF_DANGER + " --show-signature",
    numbers=True,
)
_DIFF_SPEC = spec(
    _DIFF_SHORT + "0123",
    _DIFF + " cached staged merge-base no-index base ours theirs",
    dangerous=_DIFF_DANGER,
)
_STATUS = spec(
    "sbvu::zM::",
    "short branch show-stash porcelain=? long verbose untracked-files=? ignore-submodules=? "
    "ignored=? column=? no-column ahead-behind no-ahead-behind renames no-renames "
    "find-renames=? null",
)
_REV_PARSE = spec(
    "q",
    "verify quiet sq sq-quote not symbolic symbolic-full-name abbrev-ref=? short=? all "
    "branches=? tags=? remotes=? glob= exclude= exclude-hidden= disambiguate= local-env-vars "
    "path-format= git-dir git-common-dir absolute-git-dir is-inside-git-dir "
    "is-inside-work-tree is-bare-repository is-shallow-repository show-toplevel show-cdup "
    "show-prefix show-superproject-working-tree shared-index-path show-object-format=? "
    "show-ref-format resolve-git-dir= git-path= since= after= until= before= default= "
    "prefix= revs-only no-revs flags no-flags parseopt stuck-long keep-dashdash "
    "stop-at-non-option",
)
_LS_FILES = spec(
    "cdmoiskuzx:X:tvf",
    "cached deleted modified others ignored stage killed unmerged directory "
    "no-empty-directory eol full-name abbrev=? debug exclude= exclude-from= "
    "exclude-per-directory= exclude-standard error-unmatch recurse-submodules with-tree= "
    "format= sparse deduplicate resolve-undo",
)
_LS_TREE = spec(
    "drtlz",
    "long name-only name-status object-only full-name full-tree abbrev=? format=",
)
_BLAME = spec(
    "bL:lrtsS:pnfeMwC::c",
    "root show-stats score-debug show-name show-number porcelain line-porcelain incremental "
    "show-email contents= reverse= first-parent encoding= date= progress no-progress "
    "ignore-rev= ignore-revs-file= color-lines color-by-age minimal abbrev=? since= textconv "
    "no-textconv",
    dangerous="--textconv",
)
_SHORTLOG = spec(
    "nsecw::",
    _REVISIONS + " numbered summary email committer group= format=",
    dangerous="--show-signature",
    numbers=True,
)
_DESCRIBE = spec(
    "",
    "dirty=? broken=? all tags contains abbrev= candidates= exact-match debug long match= "
    "exclude= always first-parent",
)
_CAT_FILE = spec(
    "tsepZz",
    "batch=? batch-check=? batch-command=? batch-all-objects buffer follow-symlinks unordered "
    "allow-unknown-type use-mailmap mailmap no-mailmap textconv filters path=",
    dangerous="--textconv --filters",
)
_GREP = spec(
    "e:f:EGFPiIvwnlLhHoqcaz0A:B:C:pWm:O::",
    "cached no-index untracked no-exclude-standard exclude-standard recurse-submodules text "
    "textconv no-textconv ignore-case max-depth= word-regexp invert-match full-name "
    "extended-regexp basic-regexp perl-regexp fixed-strings line-number column "
    "files-with-matches name-only files-without-match null only-matching count color=? "
    "no-color break heading show-function context= after-context= before-context= "
    "function-context threads= and or not all-match quiet max-count= open-files-in-pager=?",
    dangerous="-O --open-files-in-pager --textconv",
    numbers=True,
)
_BRANCH = spec(
    "lavrit",
    "list all remotes verbose color=? no-color column=? no-column abbrev=? no-abbrev "
    "contains=! no-contains=! merged=! no-merged=! points-at= sort= format= show-current "
    "ignore-case omit-empty",
)
_TAG = spec(
    "ln::i",
    "list contains=! no-contains=! merged=! no-merged=! points-at= sort= format= column=? "
    "no-column ignore-case color=? omit-empty",
)
_LISTS = ("-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged",
          "--points-at")  # fmt: skip
_CONFIG = spec(
    "lfz",
    "get get-all get-regexp get-urlmatch list local global system worktree file= blob= "
    "show-origin show-scope name-only null type= bool int bool-or-int path expiry-date "
    "default= includes no-includes",
)
_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l")
_CONFIG_VERBS = spec(
    "f",
    "local global system worktree file= blob= show-origin show-scope name-only null type= "
    "includes no-includes all regexp value= fixed-value url= default= show-names",
)
_REV_LIST = spec("n:", _REVISIONS, dangerous="--show-signature", numbers=True)
_MERGE_BASE = spec("a", "all octopus independent is-ancestor fork-point")
_FOR_EACH_REF = spec(
    "sp",
    "format= sort= count= contains=? no-contains=? merged=? no-merged=? points-at= shell perl "
    "python tcl ignore-case omit-empty exclude= stdin color=?",
)
_SHOW_REF = spec(
    "dsq",
    "head tags heads branches dereference hash=? abbrev=? quiet verify exists exclude-existing=?",
)
_WORKTREE_LIST = spec("vz", "porcelain verbose expire=")
_CHECK_IGNORE = spec("qvnz", "quiet verbose non-matching no-index stdin")
_COUNT_OBJECTS = spec("vH", "verbose human-readable", max_operands=0)
# A --format / --pretty that makes git verify signatures (running gpg), or names a format
# the configuration defines (pretty.<name>), which could do the same.
_SIGNATURE = re.compile(r"%G|signature")
_BUILTIN_PRETTY = frozenset(
    {"oneline", "short", "medium", "full", "fuller", "reference", "email", "raw", "mboxrd"}
)


def git_read_only(args: Sequence[Arg]) -> bool:
    """``git ARGS`` (ARGS after the program name) only reads."""
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        if args[i].kind != LITERAL:
            return False
        if args[i].value == "--version" and i == len(args) - 1:
            return True
        if args[i].value not in SAFE_GLOBAL_OPTIONS:
            return False
        i += 1
    if i >= len(args) or args[i].kind != LITERAL:
        return False
    check = SUBCOMMANDS.get(args[i].value)
    return check is not None and check(args[i + 1 :])


def _formats_safe(parsed: Parsed) -> bool:
    for name, value in parsed.options:
        if name not in ("--format", "--pretty") or value is None:
            continue
        if _SIGNATURE.search(value):
            return False
        named = "%" not in value and not value.startswith(("format:", "tformat:"))
        if named and value not in _BUILTIN_PRETTY:
            return False
    return True


def _listing(parsed: Parsed) -> bool:
    """branch / tag: names only when listing (a bare name creates a branch or tag)."""
    if not _formats_safe(parsed):
        return False
    return not parsed.operands or parsed.has(*_LISTS)


def _config(parsed: Parsed) -> bool:
    reads = [name for name, _ in parsed.options if name in _CONFIG_READS]
    return len(reads) == 1 and len(parsed.operands) <= (0 if reads[0] in ("--list", "-l") else 2)


def _config_verbs(args: Sequence[Arg]) -> bool:
    """The newer ``git config list`` / ``git config get NAME`` forms."""
    if args and args[0].value == "list":
        return accepts(_CONFIG_VERBS, args[1:], lambda p: not p.operands)
    if args and args[0].value == "get":
        return accepts(_CONFIG_VERBS, args[1:], lambda p: len(p.operands) == 1)
    return accepts(_CONFIG, args, _config)


def _first_word(allowed: dict[str, Check], default: str | None) -> Check:
    """stash list, worktree list, reflog show...: only the named sub-subcommands."""

    def check(args: Sequence[Arg]) -> bool:
        if not args:
            return default is not None
        sub = args[0]
        inner = allowed.get(sub.value) if sub.kind == LITERAL else None
        return inner is not None and inner(args[1:])

    return check


def _remote(args: Sequence[Arg]) -> bool:
    return all(a.kind == LITERAL and a.value in ("-v", "--verbose") for a in args)


# Subcommands read by an option spec (and, where operands matter, a check of them).
SPECS: dict[str, tuple[OptionSpec, Callable[[Parsed], bool] | None]] = {
    "status": (_STATUS, None),
    "log": (_LOG, _formats_safe),
    "show": (_LOG, _formats_safe),
    "diff": (_DIFF_SPEC, None),
    "rev-parse": (_REV_PARSE, None),
    "ls-files": (_LS_FILES, _formats_safe),
    "ls-tree": (_LS_TREE, _formats_safe),
    "blame": (_BLAME, None),
    "shortlog": (_SHORTLOG, _formats_safe),
    "describe": (_DESCRIBE, None),
    "cat-file": (_CAT_FILE, None),
    "grep": (_GREP, None),
    "branch": (_BRANCH, _listing),
    "tag": (_TAG, _listing),
    "rev-list": (_REV_LIST, _formats_safe),
    "merge-base": (_MERGE_BASE, None),
    "for-each-ref": (_FOR_EACH_REF, _formats_safe),
    "show-ref": (_SHOW_REF, None),
    "check-ignore": (_CHECK_IGNORE, None),
    "count-objects": (_COUNT_OBJECTS, None),
    "version": (spec("", "build-options", max_operands=0), None),
}
SUBCOMMANDS: dict[str, Check] = {name: by_spec(*entry) for name, entry in SPECS.items()}
SUBCOMMANDS.update(
    {
        "remote": _remote,
        "config": _config_verbs,
        "stash": _first_word(
            {"list": by_spec(_LOG, _formats_safe), "show": by_spec(_DIFF_SPEC)}, default=None
        ),
        "worktree": _first_word({"list": by_spec(_WORKTREE_LIST)}, default=None),
        "reflog": _first_word({"show": by_spec(_LOG, _formats_safe)}, default="show"),
    }
)
