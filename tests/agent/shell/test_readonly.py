"""The read-only classifier on Codex's and Claude Code's command lists, the attacks of
issue 8, and properties: any VAR= prefix, any unknown option and any unique prefix of a
dangerous long option make a command ask."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.shell.git_rules import SPECS as GIT_SPECS
from agent.shell.options import Arg, parse, spec
from agent.shell.part import CommandPart
from agent.shell.readers import SPECS
from agent.shell.readonly import is_read_only, is_read_only_command
from agent.shell.split import split_command

DATA = Path(__file__).with_name("commands")
LISTS = sorted(p.name for p in DATA.glob("*.txt"))


def verdicts(name: str) -> list[tuple[bool, str]]:
    """(read-only?, command) for each "+ cmd" / "- cmd" line (Claude Code's file has its
    own verdict, R or A, in between)."""
    rows = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line[:1] in ("+", "-"):
            command = line[4:] if name.startswith("claude_code") else line[2:]
            rows.append((line[0] == "+", command))
    return rows


CASES = [(name, ro, command) for name in LISTS for ro, command in verdicts(name)]


@pytest.mark.parametrize(("source", "read_only", "command"), CASES)
def test_published_lists(source: str, read_only: bool, command: str) -> None:
    assert is_read_only_command(command) is read_only


def test_every_list_is_loaded() -> None:
    counts = {name: len(verdicts(name)) for name in LISTS}
    assert set(counts) >= {
        "codex_is_safe_command.txt", "codex_is_dangerous_command.txt",
        "codex_bash_parse_rejects.txt", "claude_code_2.1.328.txt", "issue8_attacks.txt",
    }  # fmt: skip
    assert all(counts.values())


def test_where_ccx_and_claude_code_differ_the_file_says_why() -> None:
    previous = ""
    for line in (DATA / "claude_code_2.1.328.txt").read_text(encoding="utf-8").splitlines():
        if line[:1] in ("+", "-"):
            ours, theirs = line[0], line[2]
            if ours == "+" and theirs == "A":
                assert previous.startswith("# looser:"), line
            if ours == "-" and theirs == "R":
                assert previous.startswith("# stricter:"), line
        previous = line


def test_codex_bash_parses() -> None:
    lines = (DATA / "codex_bash_parse.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.startswith("{")]
    assert cases
    for case in cases:
        parts = split_command(case["command"])
        assert [list(p.words) for p in parts] == case["parts"], case["command"]
        assert not any(p.opaque for p in parts), case["command"]


@pytest.mark.parametrize(
    "command",
    ["x=rm; $x victim.txt", "c=curl; $c http://example.com", "$(echo rm) victim.txt"],
)
def test_issue8_programs_from_variables_are_dynamic(command: str) -> None:
    assert any(p.dynamic_program for p in split_command(command))


# -- properties ------------------------------------------------------------------

READ_ONLY = [c for name in LISTS for ro, c in verdicts(name) if ro and len(split_command(c)) == 1]
_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
_VALUES = st.text(st.characters(codec="ascii", exclude_characters="\x00\r\n\v\f"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(READ_ONLY), _NAMES, _VALUES)
def test_any_assignment_prefix_makes_a_command_ask(command: str, name: str, value: str) -> None:
    assert is_read_only_command(command)
    assert not is_read_only_command(f"{name}={shlex.quote(value)} {command}")


OPTION_PROGRAMS = sorted(SPECS)
_LONG_NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,14}", fullmatch=True)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(OPTION_PROGRAMS), _LONG_NAMES, st.booleans())
def test_any_unknown_long_option_makes_a_command_ask(program: str, name: str, value: bool) -> None:
    known = SPECS[program].long
    if any(option.startswith(name) for option in known):
        return  # a prefix of a known option is that option
    option = f"--{name}=x" if value else f"--{name}"
    assert not is_read_only_command(f"{program} {option} README.md")


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(OPTION_PROGRAMS), st.characters(codec="ascii", categories=["L", "N"]))
def test_any_unknown_short_option_makes_a_command_ask(program: str, letter: str) -> None:
    option_spec = SPECS[program]
    if letter in option_spec.short or (option_spec.numbers and letter.isdigit()):
        return
    assert not is_read_only_command(f"{program} -{letter} README.md")


def _dangerous_prefixes() -> list[tuple[str, str]]:
    """(program, a prefix of one of its dangerous long options), every such prefix."""
    specs = [*SPECS.items(), *((f"git {sub}", entry[0]) for sub, entry in GIT_SPECS.items())]
    return [
        (program, option[:end])
        for program, option_spec in specs
        for option in sorted(option_spec.dangerous)
        if option.startswith("--")
        for end in range(3, len(option) + 1)
        if option[2:end] not in option_spec.long or end == len(option)  # --text is --text
    ]


DANGEROUS_PREFIXES = _dangerous_prefixes()


def test_there_are_dangerous_prefixes_to_check() -> None:
    programs = {p for p, _ in DANGEROUS_PREFIXES}
    assert {"sort", "rg", "file", "hostname", "git log", "git diff", "git grep"} <= programs


@pytest.mark.parametrize(("program", "prefix"), DANGEROUS_PREFIXES)
def test_any_prefix_of_a_dangerous_long_option_makes_a_command_ask(
    program: str, prefix: str
) -> None:
    for form in (f"{prefix}=x", f"{prefix} x"):
        assert not is_read_only_command(f"{program} {form} README.md"), form
        assert not is_read_only_command(f"timeout 5 {program} {form} README.md"), form


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(n for n, s in SPECS.items() if not s.tolerates_unknown_words)))
def test_a_glob_where_options_are_read_asks_when_an_option_could_write(program: str) -> None:
    assert not is_read_only_command(f"{program} * README.md")


# -- the option parser -----------------------------------------------------------------

_SORT = SPECS["sort"]


@pytest.mark.parametrize(
    ("args", "options", "operands"),
    [
        ("-rno FILE x", [("-r", None), ("-n", None), ("-o", "FILE")], ["x"]),
        ("-oFILE x", [("-o", "FILE")], ["x"]),
        ("--outp=F x", [("--output", "F")], ["x"]),
        ("--output F x", [("--output", "F")], ["x"]),
        ("x --rev", [("--reverse", None)], ["x"]),  # GNU getopt permutes
        ("-- -o x", [], ["-o", "x"]),
        ("- x", [], ["-", "x"]),
        ("--check x", [("--check", None)], ["x"]),
        ("--check=quiet x", [("--check", "quiet")], ["x"]),
    ],
)
def test_getopt(args: str, options: list[tuple[str, str | None]], operands: list[str]) -> None:
    parsed = parse(_SORT, [Arg(a) for a in args.split()])
    assert parsed is not None
    assert parsed.options == options
    assert [a.value for a in parsed.operands] == operands


@pytest.mark.parametrize("args", ["--nope", "-Q", "--reverse=x", "-k", "--=x"])
def test_getopt_refuses_what_the_program_refuses(args: str) -> None:
    assert parse(_SORT, [Arg(a) for a in args.split()]) is None


def test_an_ambiguous_prefix_counts_as_its_most_dangerous_match() -> None:
    option_spec = spec("", "output= output-format= outline", dangerous="--output")
    parsed = parse(option_spec, [Arg("--out=x")])
    assert parsed is not None and parsed.dangerous
    safe = spec("", "outline outlast")
    assert parse(safe, [Arg("--outl")]) is not None
    assert parse(spec("", "outline outlast="), [Arg("--out")]) is None  # arities differ


def test_a_spec_must_know_its_dangerous_options() -> None:
    with pytest.raises(ValueError, match="--outptu"):
        spec("o:", "output=", dangerous="-o --outptu")


def test_stopping_at_the_first_operand() -> None:
    parsed = parse(spec("n:", permute=False), [Arg(a) for a in ["-n", "5", "cmd", "-x"]])
    assert parsed is not None
    assert [a.value for a in parsed.operands] == ["cmd", "-x"]


# -- programs with rules of their own ----------------------------------------------


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("sed -n '/start/,/end/p' f", True),
        ("sed -e 's/a/b/g' -e '3d' f", True),
        ("sed -E 's|(a)/b|\\1|2' f", True),
        ("sed 'y/abc/xyz/' f", True),
        ("sed '1i\\\nheader' f", True),
        ("sed '/x/{s/a/b/;p}' f", True),
        ("sed -n '$=' f", True),
        ("sed 's/a/b/w /dev/stdout' f", False),
        ("sed '1r other' f", True),
        ("sed '/x/w out' f", False),
        ("sed 's/x/y/;e date' f", False),
        ("sed 's/x/date/e' f", False),
        ("sed --expr='w out' f", False),
        ("sed -s -z 's/a/b/' f", True),
        ("sed 's/unterminated' f", False),
        ("awk -F: '{print $1}' /etc/passwd", True),
        ("awk 'NR > 1 && $3 >= 10 {n++} END {print n}' f", True),
        ("awk '{ x = $1 / 2; print x }' f", True),
        ("awk '/a|b/ {print}' f", True),
        ("awk 'BEGIN { getline line < \"f\"; print line }'", True),
        ("awk '{print $1 > $2}' f", False),
        ("awk '{print ($1 > $2)}' f", True),
        ('awk \'{printf "%s\\n", $1 >> "out"}\' f', False),
        ("awk '{print | \"sort\"}' f", False),
        ("awk 'BEGIN { while ((\"ls\" | getline f) > 0) print f }'", False),
        ("awk '@load \"x\"; {print}' f", False),
        ("gawk -e 'BEGIN{system(\"id\")}'", False),
        ("awk -v n=3 'NR<=n' f", True),
        ("awk -i inplace '{print}' f", False),
        ("tar -tvf x.tar", True),
        ("tar tzf x.tgz", True),
        ("tar --list --file=x.tar", True),
        ("tar -tf host:x.tar", False),  # a remote archive runs rsh
        ("tar -tf host:x.tar --force-local", True),
        ("tar -t -f x.tar -g snap", False),
        ("tar -xvf x.tar", False),
        ("tar -cf x.tar .", False),
        ("find . -type f -name '*.py' -newer setup.py -print0", True),
        ("find . \\( -name a -o -name b \\) -prune", True),
        ("find -L . -maxdepth 2", True),
        ("find . -name", False),
        ("find . -frobnicate", False),
        ("find . -fprintf out '%p'", False),
        ("date -u +%Y-%m-%dT%H:%M:%S", True),
        ("date --date=@0", True),
        ("date 010100002030", False),
        ("date --set='2030-01-01'", False),
        ("printf '%s %d\\n' a 1", True),
        ("printf -v x '%s' a", False),
        ("test -n x -a -f y", True),
        ("[ 1 -lt 2 ]", True),
        ("[ x -lt 2 ]", False),
        ("[[ x == y* ]]", True),
        ("[[ -v x ]]", False),
        ("env -0", True),
        ("env -u PATH", True),
        ("env A=1", False),
        ("env ls", False),
        ("alias -p", True),
        ("alias ll='ls -l'", False),
        ("xargs -0 -n1 grep -l foo", True),
        ("xargs -I{} grep {} f", True),
        ("xargs -I{} sort -o {} f", False),
        ("xargs -p grep x", False),
        ("xargs --process-slot-var=PATH grep x", False),
        ("xargs", True),
        ("time -p ls", True),
        ("time -o out ls", False),
        ("timeout -s KILL 5 git status", True),
        ("timeout 5", False),
        ("command ls", True),
        ("command -p rm x", False),
        ("nice -n 5 sort -o x y", False),
        ("stdbuf -oL grep x f", True),
        ("builtin cd /tmp", True),
        ("bash -o pipefail -c 'ls | wc -l'", True),
        ("bash -O extglob -c 'ls'", False),
        ("bash script.sh", False),
        ("eval 'ls; rm x'", False),
        ("set -euo pipefail; git status", True),
        ("set +x -e", True),
        ("set -o vi", False),
        ("set", False),
        ("set -- a b", False),
        ("set -k", False),
        ("pushd src && ls && popd", True),
        ("sudo ls", False),
        ("doas ls", False),
        ("exec ls", False),
        ("watch ls", False),
    ],
)
def test_programs_with_rules_of_their_own(command: str, read_only: bool) -> None:
    assert is_read_only_command(command) is read_only


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("git --version", True),
        ("git --no-pager --no-optional-locks status -sb", True),
        ("git log --oneline --graph --decorate --all -20", True),
        ("git log -L 1,5:README.md", True),
        ("git log --format='%h %an %s' --since=2.weeks", True),
        ("git log --format=%G?", False),
        ("git log --pretty=format:'%H %GS'", False),
        ("git log --pretty=fuller", True),
        ("git log --pretty=myalias", False),  # pretty.myalias comes from the config
        ("git log --show-signature", False),  # runs gpg
        ("git log --output-indicator-new=+", True),
        ("git log --textconv", False),
        ("git log --no-textconv -p", True),
        ("git diff --cached --name-only", True),
        ("git diff --no-ext-diff HEAD~1", True),
        ("git diff --ext-diff", False),
        ("git diff -- *.py", True),
        ("git diff *.py", False),  # a file named --output=x would become an option
        ("git show HEAD --stat", True),
        ("git status --porcelain=v2 -uno", True),
        ("git rev-parse --abbrev-ref HEAD", True),
        ("git ls-files -z --others --exclude-standard", True),
        ("git ls-tree -r --name-only HEAD", True),
        ("git blame -w -C -L 10,+5 f", True),
        ("git blame --textconv f", False),
        ("git shortlog -sne", True),
        ("git describe --tags --dirty", True),
        ("git cat-file -t HEAD", True),
        ("git cat-file --filters HEAD:f", False),
        ("git grep -n -e foo -- '*.py'", True),
        ("git grep --open-files-in-pager foo", False),
        ("git branch --contains HEAD -r", True),
        ("git branch -vv --merged main", True),
        ("git branch --format='%(refname:short)'", True),
        ("git branch --format='%(signature)'", False),
        ("git branch -c a b", False),
        ("git branch --set-upstream-to=origin/main", False),
        ("git tag -n5 -l 'v1.*'", True),
        ("git tag --contains HEAD", True),
        ("git tag -s v1 -m msg", False),
        ("git tag -v v1", False),  # verifies with gpg
        ("git remote show origin", False),  # asks the network, with the config's ssh
        ("git config --get-regexp '^alias\\.'", True),
        ("git config --global --get user.email", True),
        ("git config --get user.name extra more", False),
        ("git config list --show-origin", True),
        ("git config get user.name", True),
        ("git config set user.name x", False),
        ("git config --list --add x.y z", False),
        ("git stash show -p stash@{0}", True),
        ("git stash drop", False),
        ("git worktree list --porcelain", True),
        ("git worktree remove w", False),
        ("git reflog show --date=iso", True),
        ("git reflog delete HEAD@{1}", False),
        ("git rev-list --count --all", True),
        ("git for-each-ref --sort=-committerdate refs/heads", True),
        ("git check-ignore -v x", True),
        ("git count-objects -vH", True),
        ("git help log", False),
        ("git st", False),  # an alias: the config says what it runs
        ("git", False),
        ("git --exec-path", False),
        ("git --html-path", False),
        ("git -p log", False),
        ("git -c x=y status", False),
    ],
)
def test_git(command: str, read_only: bool) -> None:
    assert is_read_only_command(command) is read_only


# -- what a part must be before its program is even looked at --------------------------


def test_a_part_built_by_hand_counts_only_plain_words_as_literal() -> None:
    assert is_read_only(CommandPart("ls -la", ("ls", "-la"), ("ls", "-la")))
    assert not is_read_only(CommandPart("ls $X", ("ls", "$X"), ("ls", "$X")))
    assert not is_read_only(CommandPart("ls *", ("ls", "*"), ("ls", "*"), ("out",)))


@pytest.mark.parametrize(
    "command",
    [
        "ls > out",
        "A=1 ls",
        "ls $X",
        'cat "$f"',
        "ls ${X:-.}",
        "$LS",
        "ls; A=1",
        "ls `pwd`",
        "for f in *; do ls; done",
        "f() { ls; }; f",
        "(ls)",
        "ls \\ #; rm -rf x",
    ],
)
def test_plain_commands_only(command: str) -> None:
    assert not is_read_only_command(command)


def test_every_reader_with_a_spec_is_read_only_plainly_used() -> None:
    for name in SPECS:
        assert is_read_only_command(name) or is_read_only_command(f"{name} README.md"), name


def test_the_lists_are_not_trivially_all_one_verdict() -> None:
    flags = [ro for _, ro, _ in CASES]
    assert 100 < sum(flags) < len(flags) - 100
