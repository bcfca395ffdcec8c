"""`ccx demo`: an offline tour with a scripted model, for a newcomer without an API key.

It writes the tinyledger sample project into a temporary directory, starts
the fake Messages API in-process on 127.0.0.1 with the scripted model of
``tui.demo.script`` answering every request, and opens a real interactive
session there (the full-screen app, or the plain REPL with ``--plain``). The
window is small (20K tokens), so within a minute the meter fills, the warning
shows and auto-compaction runs. Nothing leaves the machine: the environment
of the session is stripped of credentials, proxies and provider switches, and
its config directory and home are temporary too.

    ccx demo [--plain] [--pace N] [--keep]
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tui.demo.sample_repo import make_demo_repo
from tui.demo.script import DEMO_PROMPT, DemoModel
from tui.fake_api import FakeApi
from tui.session.options import RunOptions

BANNER = "ccx demo — a scripted model, no API calls; nothing leaves this machine"
DEMO_MODEL = "claude-haiku-4-5"
DEMO_WINDOW = "20000"
DEMO_KEY = "ccx-demo-no-key"
# Anything that could send the session elsewhere or change its numbers.
CLEARED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "DISABLE_COMPACT",
    "DISABLE_AUTO_COMPACT",
    "CCX_AUTO_COMPACT_WINDOW",
    "CCX_SKIP_MODELS_API",
)
USAGE = """\
usage: ccx demo [--plain] [--pace N] [--keep]

An offline tour of ccx: a scripted model (no API calls, no key needed) works
in a small sample project, and a tiny context window shows the meter, the
warning and auto-compaction within a minute.

  --plain    use the plain line-by-line REPL instead of the full-screen app
  --pace N   speed of the scripted model (1 = human pace, 2 = twice as fast,
             0 = instant)
  --keep     keep the sample project and the session files afterwards
"""


@dataclass
class DemoSession:
    """A running demo back end: the sample project, the fake API and the options to open it."""

    root: Path
    api: FakeApi
    model: DemoModel
    options: RunOptions


def demo_options(root: Path) -> RunOptions:
    return RunOptions(
        cwd=root,
        model=DEMO_MODEL,
        autocompact=DEMO_WINDOW,
        permission_mode="default",
        headless=False,
        banner=BANNER,
        resume_hint=False,  # the session lives in a throwaway config folder
        show_cost=False,  # the scripted model bills nothing; /cost still shows the counts
        # The script reads, edits and runs commands only, and its tiny window has no room for
        # the definitions of tools it never calls (WebFetch, background jobs, subagents).
        subagents=False,
        tools=["Read", "Write", "Edit", "Bash", "Grep", "Glob", "Skill", "ExitPlanMode"],
    )


@contextlib.contextmanager
def demo_environment(
    api_url: str, config: Path, home: Path, environ: dict[str, str] | None = None
) -> Iterator[None]:
    """Point the process at the fake API with throwaway config and home; restore on exit."""
    env = os.environ if environ is None else environ
    changes: dict[str, str | None] = {name: None for name in CLEARED_ENV}
    changes.update(
        ANTHROPIC_BASE_URL=api_url,
        ANTHROPIC_API_KEY=DEMO_KEY,
        CCX_CONFIG_DIR=str(config),
        HOME=str(home),
    )
    saved = {name: env.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value


@contextlib.contextmanager
def demo_session(workdir: Path, pace: float = 1.0) -> Iterator[DemoSession]:
    """The sample project in ``workdir`` and the scripted fake API, for as long as it is open."""
    root = make_demo_repo(workdir / "tinyledger")
    (workdir / "home").mkdir(parents=True, exist_ok=True)
    with FakeApi() as api:
        model = DemoModel(root, pace=pace, has_git=(root / ".git").exists())
        api.on(model.matches, model)
        with demo_environment(api.url, workdir / "config", workdir / "home"):
            yield DemoSession(root, api, model, demo_options(root))


def parse_args(argv: list[str]) -> tuple[bool, float, bool] | str:
    """(plain, pace, keep), or the text to print when the arguments are not usable."""
    plain, keep = False, False
    pace = float(os.environ.get("CCX_DEMO_PACE", "1") or 1)
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            return USAGE
        if arg == "--plain":
            plain = True
        elif arg == "--keep":
            keep = True
        elif arg == "--pace" and args:
            try:
                pace = max(0.0, float(args.pop(0)))
            except ValueError:
                return "ccx demo: --pace takes a number\n\n" + USAGE
        else:
            return f"ccx demo: unknown argument {arg!r}\n\n" + USAGE
    return plain, pace, keep


def main(argv: list[str]) -> int:
    parsed = parse_args(argv)
    if isinstance(parsed, str):
        print(parsed, file=sys.stdout if parsed == USAGE else sys.stderr)
        return 0 if parsed == USAGE else 2
    plain, pace, keep = parsed
    from tui.cli.interactive import start_interactive

    print(BANNER, flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="ccx-demo-"))
    try:
        with demo_session(workdir, pace) as session:
            print(f"Sample project: {session.root}", flush=True)
            code = start_interactive(session.options, DEMO_PROMPT, plain, check=False)
    finally:
        if keep:
            print(f"The sample project and the session files are kept in {workdir}")
        else:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    return code
