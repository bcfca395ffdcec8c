"""Commands the model carries out: /init, /review, /security-review, /statusline.

Each returns instructions (``CommandResult.prompt``); the session driver sends them
with the user's line as one turn, so the work shows, asks and is undone like any other.
The wording is ccx's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.permissions.settings import project_root
from tui.commands.registry import CommandResult, command

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

INIT = """\
The user ran /init: write (or improve) the file CLAUDE.md at {root}, the instructions every \
later session in this repository starts with.
{existing}
Find out first, with read-only tools: how to install, build, lint and test (the exact \
commands, including how to run one test), the layout and the few ideas a newcomer must know \
to change code safely (architecture that spans several files, conventions the code follows, \
generated or vendored parts not to edit). Read README, package manifests, CI configuration, \
Makefiles, and any .cursorrules, .cursor/rules, .github/copilot-instructions.md or AGENTS.md \
and carry over what is still true.
Then write it: short, specific to this repository, commands in code blocks. Leave out \
generic advice (write tests, handle errors), lists of every file, and anything easy to \
find by reading one file. Start it with the line "# CLAUDE.md" and one sentence on what \
the file is for. Say in one line what you wrote."""

INIT_EXISTING = """\
A CLAUDE.md exists already: read it, keep what is still right, correct what is not, and \
add what is missing; do not start over."""

REVIEW = """\
The user ran /review{target}: review a pull request.
{what}
Read the change in full, with enough of the surrounding code to judge it. Report, most \
important first: bugs and behaviour the change gets wrong, risks (security, data loss, \
concurrency, performance), tests that are missing or do not test what they claim, and \
places where the code is harder to follow than it needs to be. Point at file and line. \
Say briefly what the change does and whether it is ready to merge. Change no files."""

REVIEW_PICK = """\
No pull request was named. Run `gh pr list` to show the open ones and ask the user which \
to review. If `gh` is missing or not logged in, review the current branch instead: its \
commits and diff against the default branch (`git log` / `git diff` from the merge base)."""

REVIEW_NUMBER = """\
Use `gh pr view {number}` and `gh pr diff {number}` to read it. If `gh` is missing or not \
logged in, say so and stop."""

SECURITY_REVIEW = """\
The user ran /security-review: review the changes on the current branch for security \
problems. Find the default branch and the merge base, then read `git diff <merge-base>` \
(and uncommitted changes) and the code they touch.
Look for vulnerabilities the change introduces: injection (SQL, shell commands, paths, \
templates), authentication and authorization mistakes, secrets in code or logs, unsafe \
deserialization, server-side request forgery, cross-site scripting, weak or misused \
cryptography, and data exposed to those who should not see it.
Report only problems you are confident an attacker could use, each with: file and line, \
what an attacker does, what they gain, and the fix. Leave out denial of service, rate \
limits, style, and issues that exist only in tests or need an attacker who already \
controls the machine. If you find nothing of that kind, say so plainly. Change no files."""

STATUSLINE = """\
The user ran /statusline: set up the status line ccx shows under the prompt.
{wish}
A status line is a command in the user's settings file {settings}, under the key \
"statusLine": {{"type": "command", "command": "..."}}. ccx runs it after each turn with \
a JSON description of the session on stdin (fields model.display_name, workspace.current_dir, \
cost.total_cost_usd, session_id, transcript_path) and shows the first line it prints \
(colours allowed). Write a small script (for example ~/.ccx/statusline.sh; use jq only \
if it is installed) and point the setting at it, keeping every other key of the file. \
Test the script with a sample JSON on stdin, then tell the user what it shows."""

STATUSLINE_FROM_PS1 = """\
The user gave no description: base it on their shell prompt (PS1 in ~/.bashrc or \
~/.zshrc; leave out what a status line cannot know, such as the exit code), and add the \
model and the folder."""


@command("init", "/init", "Write a CLAUDE.md for this repository, through the model")
async def _init(runtime: Runtime, _args: str) -> CommandResult:
    root = project_root(runtime.cwd)
    existing = INIT_EXISTING if (root / "CLAUDE.md").is_file() else ""
    return CommandResult("", prompt=INIT.format(root=root, existing=existing))


@command(
    "review", "/review [PR]", "Review a pull request (or the current branch), through the model"
)
async def _review(runtime: Runtime, args: str) -> CommandResult:
    number = args.strip().lstrip("#")
    if number and not number.isdigit():
        return CommandResult(f"Usage: /review [PR number]; got {args.strip()!r}", is_error=True)
    what = REVIEW_NUMBER.format(number=number) if number else REVIEW_PICK
    target = f" {number}" if number else ""
    return CommandResult("", prompt=REVIEW.format(target=target, what=what))


@command(
    "security-review",
    "/security-review",
    "Review the branch's changes for security problems, through the model",
)
async def _security_review(runtime: Runtime, _args: str) -> CommandResult:
    return CommandResult("", prompt=SECURITY_REVIEW)


@command("statusline", "/statusline [what to show]", "Set up the status line, through the model")
async def _statusline(runtime: Runtime, args: str) -> CommandResult:
    from agent.core.locations import config_dir

    wish = (
        f"What the user wants it to show: {args.strip()}" if args.strip() else STATUSLINE_FROM_PS1
    )
    settings = config_dir() / "settings.json"
    return CommandResult("", prompt=STATUSLINE.format(wish=wish, settings=settings))
