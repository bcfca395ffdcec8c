"""Splitting shell command lines into the simple commands permission rules judge."""

from __future__ import annotations

import pytest

from agent.shell.readonly import is_read_only, is_read_only_command
from agent.shell.split import iter_all_parts, split_command


def commands(line: str) -> list[str]:
    return [p.command for p in split_command(line)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ls && rm -rf /", ["ls", "rm -rf /"]),
        ("git status; git log", ["git status", "git log"]),
        ("a || b | c & d", ["a", "b", "c", "d"]),
        ("a |& b", ["a", "b"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ('echo "a && b"', ['echo "a && b"']),
        ("echo 'a; b' | grep x", ["echo 'a; b'", "grep x"]),
        (r"echo a\;b", [r"echo a\;b"]),
        ("echo $'it\\'s; fine'", ["echo $'it\\'s; fine'"]),
        ("FOO=1 BAR='x y' npm test", ["npm test"]),
        ("ls   -la    src", ["ls -la src"]),
        ("ls # && rm -rf /", ["ls"]),
        ("echo a#b", ["echo a#b"]),
        ("if [ -f x ]; then cat x; fi", ["[ -f x ]", "cat x"]),
        ("while true; do ls; done", ["true", "ls"]),
        ("echo a\\\nb", ["echo ab"]),
        ("", []),
        (" ; ;; ", []),
    ],
)
def test_split_into_simple_commands(line: str, expected: list[str]) -> None:
    assert commands(line) == expected


def test_words_have_quotes_removed() -> None:
    (part,) = split_command("git log --format='%H %s' \"a b\" c\\ d")
    assert part.words == ("git", "log", "--format=%H %s", "a b", "c d")
    assert part.raw_words[2] == "--format='%H %s'"


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        ("ls > out.txt", ("out.txt",)),
        ("ls >> log", ("log",)),
        ("ls &> all.log", ("all.log",)),
        ("ls &>> all.log", ("all.log",)),
        ("ls 2>err.txt", ("err.txt",)),
        ("ls >| forced", ("forced",)),
        ("ls >&file", ("file",)),
        ("ls > /dev/null 2>&1", ()),
        ("echo hi >&2", ()),
        ("ls 2>&-", ()),
        ("cat < in.txt", ()),
        ("cat <<< 'word'", ()),
        ('ls > "my file"', ("my file",)),
    ],
)
def test_output_redirections_are_writes(line: str, writes: tuple[str, ...]) -> None:
    (part,) = split_command(line)
    assert part.writes == writes
    assert part.words[0] in ("ls", "echo", "cat")


def test_redirection_is_not_part_of_the_command() -> None:
    (part,) = split_command("git log -n 3 > log.txt 2>&1")
    assert part.command == "git log -n 3"
    assert part.text == "git log -n 3 > log.txt 2>&1"


def test_heredoc_body_is_not_split() -> None:
    parts = split_command("cat <<EOF > notes.txt\nrm -rf / && evil\nEOF\nls")
    assert [p.command for p in parts] == ["cat", "ls"]
    assert parts[0].writes == ("notes.txt",)
    assert not parts[0].opaque


def test_heredoc_with_substitution_is_opaque_unless_quoted() -> None:
    assert split_command("cat <<EOF\n$(rm -rf /)\nEOF")[0].opaque
    assert not split_command("cat <<'EOF'\n$(rm -rf /)\nEOF")[0].opaque
    assert not split_command("cat <<-EOF\n\tplain\n\tEOF\nls")[0].opaque


@pytest.mark.parametrize(
    ("line", "reason", "inner"),
    [
        ("echo $(rm -rf /)", "command substitution", "rm -rf /"),
        ('echo "$(rm -rf /)"', "command substitution", "rm -rf /"),
        ("echo `rm -rf /`", "command substitution", "rm -rf /"),
        ("(cd x && rm y)", "a subshell", "cd x && rm y"),
        ("diff <(rm a) b", "process substitution", "rm a"),
        ("tee >(rm x)", "process substitution", "rm x"),
        ("X=$(rm y) ls", "command substitution", "rm y"),
        ("echo ${a:-$(rm y)}", "command substitution", "rm y"),
    ],
)
def test_substitutions_make_a_part_opaque(line: str, reason: str, inner: str) -> None:
    part = split_command(line)[0]
    assert part.opaque_reason == reason
    assert inner in part.nested
    assert "rm" in [p.words[0] for p in iter_all_parts(line) if p.words]


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("eval 'rm -rf /'", "rm -rf /"),
        ("bash -c 'ls; rm x'", "ls; rm x"),
        ("sudo -u bob /bin/sh -ec 'rm x'", "rm x"),
        ("bash script.sh", None),
        ("echo bash -c x", None),
    ],
)
def test_code_run_by_eval_or_a_shell_is_nested(line: str, inner: str | None) -> None:
    (part,) = split_command(line)
    assert part.nested == ((inner,) if inner else ())
    assert not part.opaque  # the words are plain; only deny rules look inside


def test_other_opaque_forms() -> None:
    assert split_command("$CMD --flag")[0].opaque_reason.startswith("a command name")
    assert split_command("echo 'unterminated")[0].opaque
    assert split_command("echo (oops")[0].opaque
    assert not split_command('echo "$HOME"')[0].opaque  # variables as arguments are fine


def test_single_quotes_hide_substitution() -> None:
    (part,) = split_command("echo '$(rm -rf /)'")
    assert not part.opaque
    assert part.words == ("echo", "$(rm -rf /)")


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "git status; git log --oneline | head -20",
        "git diff HEAD~1 -- src",
        "git branch",
        "git branch -a -v",
        "git branch --list 'feat/*'",
        "find . -name '*.py' -type f",
        "cat a | sort | uniq -c | sort -rn",
        "grep -rn TODO src 2>/dev/null",
        "cd src && ls",
        "env",
        "echo done",
        "date +%s",
        "[ -d x ] && ls x",
    ],
)
def test_read_only_commands(line: str) -> None:
    assert is_read_only_command(line)


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf build",
        "ls > listing.txt",
        "echo x >> notes",
        "git commit -m x",
        "git branch feature",
        "git branch -D old",
        "git -c core.pager=evil log",
        "git -C sub show HEAD",  # -C reads another repository's config, hooks and all
        "git diff --output=patch.txt",
        "find . -name x -delete",
        "find . -exec rm {} ;",
        "find . -fprint out",
        "sort -o out in",
        "sort --output=out in",
        "uniq in out",
        "tree -o out",
        "rg --pre ./evil pattern",
        "date -s tomorrow",
        "env FOO=1 rm x",
        "echo $(rm x)",
        "./ls",
        "ls && rm x",
        "npm test",
    ],
)
def test_not_read_only(line: str) -> None:
    assert not is_read_only_command(line)


def test_empty_part_is_not_read_only() -> None:
    (part,) = split_command("> truncated.txt")
    assert part.writes == ("truncated.txt",)
    assert not is_read_only(part)


# -- the parse: tree-sitter's bash grammar, and where it parts from bash ---------


def test_assignments_are_kept_in_order() -> None:
    (part,) = split_command("A=1 B='x y' C+=z git diff")
    assert part.assignments == ("A=1", "B='x y'", "C+=z")
    assert part.words == ("git", "diff")


@pytest.mark.parametrize(
    "line",
    ["x=rm", "a=(1 2) b=3", "PATH=/tmp/evil:$PATH"],
)
def test_a_bare_assignment_is_an_opaque_part(line: str) -> None:
    (part,) = split_command(line)
    assert part.assignments and not part.words
    assert part.opaque  # it changes what the commands after it run


@pytest.mark.parametrize(
    ("line", "words", "writes"),
    [
        ("ls <> f", ("ls",), ("f",)),  # the grammar has no <> operator
        ("exec 3<>f", ("exec",), ("f",)),
        ("sort <in -o PWN", ("sort", "-o", "PWN"), ()),  # the grammar files -o PWN under <in
        ("sort <<EOF -o PWN\nx\nEOF", ("sort", "-o", "PWN"), ()),
        ("sort -o2>x", ("sort", "-o2"), ("x",)),  # -o2 is a word to bash, not a descriptor
        ("cat <<< 'w' > out", ("cat",), ("out",)),
        ("{ ls; } >| out", ("ls",), ("out",)),
    ],
)
def test_words_and_writes_the_grammar_misplaces(
    line: str, words: tuple[str, ...], writes: tuple[str, ...]
) -> None:
    (part,) = split_command(line)
    assert (part.words, part.writes) == (words, writes)
    assert not part.opaque


def test_a_redirection_of_a_compound_command_writes_for_every_part() -> None:
    parts = split_command("{ ls; pwd; } > out 2>&1")
    assert [(p.command, p.writes) for p in parts] == [("ls", ("out",)), ("pwd", ("out",))]


def test_commands_the_grammar_nests_in_a_heredoc() -> None:
    parts = split_command("cat <<EOF | grep x > o && rm y\nbody $(id)\nEOF\nls")
    assert [p.command for p in parts] == ["cat", "grep x", "rm y", "ls"]
    assert parts[0].opaque and parts[0].nested == ("id",)
    assert parts[1].writes == ("o",)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('echo $"hi" there', ("echo", "hi", "there")),  # $"..." is one word
        ("echo -x$\"t\"'q s'", ("echo", "-xtq s")),
        ("r\\\nm -rf x", ("rm", "-rf", "x")),  # a backslash-newline inside a word
        ("echo $'a\\x41\\101\\u00e9\\0gone'", ("echo", "aAAé")),
        ('echo "a\\"b" "\\$x" \'\\n\'', ("echo", 'a"b', "$x", "\\n")),
        ("echo a\\ b \\*", ("echo", "a b", "*")),
    ],
)
def test_word_values(line: str, words: tuple[str, ...]) -> None:
    (part,) = split_command(line)
    assert part.words == words


@pytest.mark.parametrize(
    "line",
    [
        "ls \\ #; rm -rf x",  # an escaped blank the grammar skips: bash runs rm
        "ls\v#; rm -rf x",  # \v, \f, \r are word characters to bash, blanks to the grammar
        "ls \\\r\nrm -rf x",
        "ls x\n\\rm -rf y",  # the grammar reads the next line into a word
        "b # \\\n\\\nrm -rf x",  # a comment the grammar continues
        "ls \\\n \n2>/dev/null rm -rf x",  # the grammar reads on after a blank line
        "echo `ls` `rm -rf x`",  # two substitutions the grammar reads as one
        "! ls >/dev/null rm -rf x",
        "echo 'unterminated",
        "ls &&",
        "&& ls",
        "ls ;; pwd",  # the grammar accepts ;; outside a case, bash refuses the line
        "cmd \\;\\\n#c",  # bash reads the word ;#c, the grammar a comment
        "cat <<A <<B\na\nA\nb\nB",
    ],
)
def test_text_the_grammar_may_misread_is_opaque_and_dynamic(line: str) -> None:
    parts = split_command(line)
    assert parts and all(p.opaque and p.dynamic_program for p in parts)


def test_double_brackets_expand_no_file_names() -> None:
    (part,) = split_command("[[ $x == y* ]]")
    assert part.word_kinds == ("literal", "dynamic", "literal", "literal", "literal")
    (single,) = split_command("[ x = y* ]")
    assert "glob" in single.word_kinds


def test_separators_alone_are_no_command() -> None:
    assert split_command(" ; ;; ") == []
    assert split_command("# only a comment") == []


@pytest.mark.parametrize(
    ("line", "dynamic"),
    [
        ("$x victim.txt", True),
        ("$(echo rm) x", True),
        ('"${CMD}" -rf x', True),
        ("* x", True),  # the first file name is the program
        ('eval "$x"', True),
        ("eval ls -la", False),
        ('bash -c "$x"', True),
        ("bash -c 'ls'", False),
        ('sudo -u bob sh -c "$x"', True),
        ('env X=1 timeout 5 sh -ec "$y"', True),
        ("timeout 5 $x", True),
        ("xargs sh -c", True),  # the body comes from the input
        ("xargs -I{} sh -c {}", True),
        ("xargs -0 rm -f", False),
        ("find . -exec sh -c 'rm {}' \\;", True),  # file names become code
        ("find . -exec {} \\;", True),
        ("find . -exec rm {} \\;", False),
        ("watch 'ls'", False),
        ('watch "$x"', True),
        ("env -S 'ls -la'", False),
        ("ls $HOME", False),  # a computed argument, not a computed program
    ],
)
def test_dynamic_program(line: str, dynamic: bool) -> None:
    (part,) = split_command(line)
    assert part.dynamic_program is dynamic
    assert part.opaque or not dynamic


@pytest.mark.parametrize(
    ("line", "nested"),
    [
        ("find . -name '*.o' -exec rm -f {} \\;", ("rm -f {}",)),
        ("find . -exec a {} + -execdir b \\;", ("a {}", "b")),
        ("find . -ok rm {} \\;", ("rm {}",)),
        ("xargs -0 rm -f", ("rm -f",)),
        ("xargs -n1 sh -c 'rm \"$1\"' _", ("sh -c 'rm \"$1\"' _",)),
        ("sudo env A=1 bash -c 'rm x'", ("rm x",)),
        ("bash +x -o pipefail -c 'rm x'", ("rm x",)),
        ("watch rm x", ("rm x",)),
        ("env -S 'rm x'", ("rm x",)),
        ("f() { rm x; }", ("{ rm x; }",)),
        ("alias ls='rm -rf'", ("rm -rf",)),
    ],
)
def test_nested_code(line: str, nested: tuple[str, ...]) -> None:
    (part,) = split_command(line)
    assert part.nested == nested


def test_all_parts_reach_into_nested_code() -> None:
    line = "find . -exec sh -c 'xargs -0 rm -f < \"$1\"' _ {} \\; | sudo bash -c 'eval \"rm y\"'"
    programs = [p.words[0] for p in iter_all_parts(line) if p.words]
    assert programs.count("rm") == 2


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("f() { ls; }", "a function definition"),
        ("alias ll='ls -l'", "an alias definition"),
        ("((x++))", "an arithmetic expression"),
        ("for ((i=0;i<3;i++)); do ls; done", "an arithmetic expression"),
    ],
)
def test_constructs_that_are_opaque(line: str, reason: str) -> None:
    assert split_command(line)[0].opaque_reason == reason


def test_a_for_loop_variable_is_an_assignment() -> None:
    parts = split_command("for HOME in /tmp/evil; do git status; done")
    assert parts[0].assignments == ("HOME=/tmp/evil",) and parts[0].opaque
    assert parts[1].command == "git status"


def test_compound_commands() -> None:
    line = (
        'case $x in a|b) ls;; *) pwd;; esac; while read -r l; do echo "$l"; done < f; '
        "until false; do :; done; select x in a; do ls; done; [[ -n x ]] || test -d y"
    )
    assert [p.command for p in split_command(line) if not p.assignments] == [
        "ls", "pwd", "read -r l", 'echo "$l"', "false", ":", "ls", "[[ -n x ]]", "test -d y",
    ]  # fmt: skip


def test_substitutions_in_headers_are_seen() -> None:
    parts = split_command("case $(rm a) in x) ls;; esac; for f in $(rm b); do :; done")
    assert {"rm a", "rm b"} <= {n for p in parts for n in p.nested}


@pytest.mark.parametrize("line", ["echo '\udcff'", "cat bad\udcff\udcfe.txt", "ls \x00"])
def test_text_that_is_not_utf8_does_not_crash(line: str) -> None:
    assert split_command(line)


def test_split_is_cached_but_returns_fresh_lists() -> None:
    first = split_command("ls; pwd")
    first.clear()
    assert [p.command for p in split_command("ls; pwd")] == ["ls", "pwd"]


def test_input_redirections_are_reads() -> None:
    (part,) = split_command("sort -u < names.txt")
    assert part.reads == ("names.txt",) and part.writes == ()
    (part,) = split_command("wc -l <> both.txt")
    assert part.reads == ("both.txt",) and part.writes == ("both.txt",)
    assert split_command("cat <&3")[0].reads == ()
    assert split_command("cat <<< 'here'")[0].reads == ()
