"""ExitPlanMode: present the plan to the user and, if they approve it, leave plan mode.

The tool asks the user itself (through ``approve``), which is why the
permission gate lets it through in plan mode. Without anyone to ask
(headless) the plan is kept in the plan file and plan mode stays on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult


class ExitPlanModeParams(ToolParams):
    plan: str | None = Field(
        default=None,
        description="The plan to present for approval, in Markdown. Leave it out to present "
        "the plan file as it is",
    )


class ExitPlanModeTool(Tool[ExitPlanModeParams]):
    name = "ExitPlanMode"
    is_mutating = False

    def __init__(
        self,
        plan_path: Callable[[], Path],
        approve: Callable[[str], Awaitable[bool]] | None,
        on_exit: Callable[[], None],
        in_plan_mode: Callable[[], bool] | None = None,
    ) -> None:
        self.plan_path = plan_path
        self.approve = approve
        self.on_exit = on_exit
        self.in_plan_mode = in_plan_mode

    def label(self, params: ExitPlanModeParams, cwd: StrPath | None = None) -> str:
        return "Present the plan for approval"

    async def run(self, params: ExitPlanModeParams, ctx: ToolContext) -> ToolResult:
        if self.in_plan_mode is not None and not self.in_plan_mode():
            return ToolResult.error(
                "Plan mode is not on, so there is nothing to exit: go ahead with the task."
            )
        path = self.plan_path()
        plan, problem = _plan_text(params.plan, path)
        if problem:
            return ToolResult.error(problem)
        if self.approve is None:
            return ToolResult(
                output=(
                    f"The plan was saved to {path}, but nobody is here to approve it in this "
                    "session, so plan mode stays on. The user must approve it by switching the "
                    "permission mode (or by telling you to go ahead). Do not make any changes "
                    "until then; end your turn with a short summary of the plan."
                ),
                display=f"Plan saved to {path}; waiting for approval",
                meta={"approved": False, "plan_path": str(path)},
            )
        if not await self.approve(plan):
            return ToolResult(
                output=(
                    "The user did not approve the plan and wants changes, so plan mode stays "
                    f"on. Ask what they would like to change if it is not clear, update {path}, "
                    "and call ExitPlanMode again when the revised plan is ready."
                ),
                display="Plan not approved; still in plan mode",
                meta={"approved": False, "plan_path": str(path)},
            )
        self.on_exit()
        return ToolResult(
            output=(
                "The user approved the plan and plan mode is off: you may now edit files and run "
                f"commands to carry it out. The plan is saved in {path}.\n\n"
                f"Approved plan:\n{plan}"
            ),
            display="Plan approved",
            meta={"approved": True, "plan_path": str(path)},
        )


def _plan_text(given: str | None, path: Path) -> tuple[str, str]:
    """``(plan, problem)``: the plan from the parameter (saved to the file) or from the file."""
    if given is not None and given.strip():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(given, encoding="utf-8")
        except OSError as exc:
            return "", f"Could not save the plan to {path}: {exc}"
        return given.strip(), ""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        return "", f"Could not read the plan file {path}: {exc}"
    if not text.strip():
        return "", (
            f"There is no plan to present: write it to {path} first (or pass it as `plan`), "
            "then call ExitPlanMode again."
        )
    return text.strip(), ""
