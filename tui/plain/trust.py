"""The plain REPL's trust question: asked once per project, before its settings apply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from tui.plain.repl import PlainRepl


async def settle_trust(repl: PlainRepl) -> bool:
    """Ask whether to trust the project before its settings apply; False: the user quit."""
    from agent.permissions import trust
    from agent.permissions.settings import project_root

    project = project_root(repl.options.cwd)
    question = trust.trust_question(project)
    if question is None:
        repl.options.project_trusted = True
        return True
    repl.options.project_trusted = False
    if not repl.source.interactive:
        repl.renderer.line(
            f"ccx: {project} is not trusted, so its hooks, env and allow rules are not used; "
            "run ccx there in a terminal once to trust it",
            "yellow",
        )
        return True
    repl.renderer.markup(f"[bold yellow]? Do you trust the files in {escape(str(project))}?[/]")
    repl.renderer.line("  Trusting it lets its settings take effect, which can run commands:")
    for item in question.items:
        repl.renderer.line(f"  • {item}", "dim")
    repl.renderer.line(
        "  y = yes, trust this folder · n = continue without its settings · Ctrl-C = exit",
        "dim",
    )
    repl.waiting = "permission"
    try:
        reply = await repl.source.read_permission()
    except (EOFError, KeyboardInterrupt):
        reply = "interrupt"
    finally:
        repl.waiting = None
    if reply == "interrupt":
        return False
    if reply in ("allow", "always"):
        repl.options.project_trusted = True
        try:
            trust.trust(project)
        except OSError as exc:
            repl.renderer.line(f"  could not remember it: {exc}", "red")
        repl.renderer.line("  → trusted", "green")
    else:
        repl.renderer.line("  → continuing without the project's settings", "red")
    return True
