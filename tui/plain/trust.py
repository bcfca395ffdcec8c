"""The plain REPL's trust question: asked once per project, before its own parts apply
(the flow itself is tui.session.folder_trust's, shared with the full-screen app)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from tui.plain.repl import PlainRepl
    from tui.session.folder_trust import TrustAnswer, TrustQuestion


async def settle_trust(repl: PlainRepl) -> bool:
    """Ask whether to trust the project before its own parts apply; False: the user quit.
    Piped input cannot answer: a folder not trusted before stays untrusted, and says so."""
    from tui.session.folder_trust import settle_trust as settle

    options = repl.options
    ask = (lambda question: _ask(repl, question)) if repl.source.interactive else None
    settled = await settle(options.cwd, options.add_dirs, ask)
    options.project_trusted = settled.trusted
    if settled.exit:
        return False
    if settled.problem:
        repl.renderer.line(f"  {settled.problem}", "red")
    if ask is None and settled.question is not None:
        _say_untrusted(repl, settled.question)
    return True


async def _ask(repl: PlainRepl, question: TrustQuestion) -> TrustAnswer:
    repl.renderer.markup(
        f"[bold yellow]? Do you trust the files in {escape(str(question.project))}?[/]"
    )
    repl.renderer.line("  Trusting it turns on these, which can run commands or steer ccx:")
    for item in question.items:
        repl.renderer.line(f"  • {item}", "dim")
    repl.renderer.line(
        "  y = yes, trust this folder · n = continue without them · Ctrl-C = exit", "dim"
    )
    repl.waiting = "permission"
    try:
        reply = await repl.source.read_permission()
    except (EOFError, KeyboardInterrupt):
        reply = "interrupt"
    finally:
        repl.waiting = None
    if reply == "interrupt":
        return "exit"
    if reply in ("allow", "always"):
        repl.renderer.line("  → trusted", "green")
        return "trust"
    repl.renderer.line("  → continuing without them", "red")
    return "untrusted"


def _say_untrusted(repl: PlainRepl, question: TrustQuestion) -> None:
    repl.renderer.line(
        f"ccx: {question.project} is not trusted and input is not a terminal, so these stay "
        "off (run ccx there in a terminal once to trust it):",
        "yellow",
    )
    for item in question.items:
        repl.renderer.line(f"  • {item}", "yellow")
