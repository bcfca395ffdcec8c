"""Splitting shell command lines into the simple commands permission rules judge."""

from __future__ import annotations

import pytest

from agent.readonly_commands import is_read_only, is_read_only_command
from agent.shell_split import iter_all_parts, split_command


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
        ("echo ${a:-$(rm y)}", "command substitution", "a:-$(rm y)"),
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
        "git -C sub show HEAD",
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
