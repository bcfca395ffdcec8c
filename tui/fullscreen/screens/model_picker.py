"""The /model picker: the models by alias, and the effort level where the model takes one.

Up/Down choose the model, Left/Right its effort, Enter switches (through the ordinary
``/model NAME EFFORT`` command, so the session checks the model as it does for a typed
one), Esc leaves everything as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.model.catalog import (
    ALIASES,
    DEFAULT_MODEL,
    LONG_CONTEXT_SUFFIX,
    OPUSPLAN,
    OPUSPLAN_MODELS,
    traits_for,
)
from tui.fullscreen.screens.fit import fit_body


@dataclass(frozen=True)
class ModelChoice:
    name: str  # what /model is given: an alias or a model id
    label: str
    about: str

    @property
    def model(self) -> str:
        """The model whose traits (efforts) apply: opusplan's working model for opusplan."""
        if self.name == OPUSPLAN:
            return OPUSPLAN_MODELS["work"]
        base = self.name.removesuffix(LONG_CONTEXT_SUFFIX)
        return ALIASES.get(base, base)


CHOICES = (
    ModelChoice("default", "Default", f"the recommended model ({DEFAULT_MODEL})"),
    ModelChoice("opus", "Opus", f"the most capable ({ALIASES['opus']})"),
    ModelChoice("sonnet", "Sonnet", f"fast and capable ({ALIASES['sonnet']})"),
    ModelChoice("haiku", "Haiku", f"the fastest ({ALIASES['haiku']})"),
    ModelChoice(OPUSPLAN, "Opus Plan", "Opus while planning, Sonnet for the work"),
    ModelChoice("claude-sonnet-4-5", "Sonnet 4.5", "claude-sonnet-4-5 (200K window)"),
    ModelChoice(
        f"claude-sonnet-4-5{LONG_CONTEXT_SUFFIX}", "Sonnet 4.5 (1M)", "with the 1M-context beta"
    ),
    ModelChoice("claude-haiku-4-5", "Haiku 4.5", "claude-haiku-4-5 (200K window)"),
)


def current_index(model: str) -> int:
    """The choice that names ``model`` (an id), else the default."""
    for index, choice in enumerate(CHOICES):
        if choice.name == model:
            return index
    for index, choice in enumerate(CHOICES):
        if choice.model == model:
            return index
    return 0


class ModelPicker(ModalScreen["tuple[str, str | None] | None"]):
    """Dismissed with (name, effort or None), or None when cancelled."""

    DEFAULT_CSS = """
    ModelPicker {
        align: center middle;
    }
    ModelPicker > #model-dialog {
        width: 100%;
        max-width: 90;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    ModelPicker OptionList {
        height: auto;
        max-height: 12;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("left", "effort(-1)", show=False),
        Binding("right", "effort(1)", show=False),
    ]

    def __init__(self, model: str, effort: str | None) -> None:
        super().__init__()
        self.start = current_index(model)
        self.effort = effort

    def compose(self) -> ComposeResult:
        with Vertical(id="model-dialog"):
            yield Static("[b]Select a model[/b] (↑↓ model, ←→ effort, enter to switch, esc)")
            options = [Option(f"{c.label:<16} {c.about}", id=c.name) for c in CHOICES]
            yield OptionList(*options, id="model-options")
            yield Static("", id="model-effort")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = self.start
        options.focus()
        self._show_effort()
        self.call_after_refresh(self._fit)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        fit_body(self, self.query_one("#model-dialog"), self.query_one(OptionList), 12)

    def chosen(self) -> ModelChoice:
        return CHOICES[self.query_one(OptionList).highlighted or 0]

    def efforts(self) -> tuple[str, ...]:
        return traits_for(self.chosen().model).efforts

    def _show_effort(self) -> None:
        efforts = self.efforts()
        if not efforts:
            text = "Effort: not adjustable for this model"
        else:
            if self.effort not in efforts:
                self.effort = traits_for(self.chosen().model).default_effort or efforts[0]
            text = f"Effort: ◀ [b]{self.effort}[/b] ▶  ({' · '.join(efforts)})"
        self.query_one("#model-effort", Static).update(text)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_effort()

    def action_effort(self, step: int) -> None:
        efforts = self.efforts()
        if not efforts or self.effort not in efforts:
            return
        index = max(0, min(len(efforts) - 1, efforts.index(self.effort) + step))
        self.effort = efforts[index]
        self._show_effort()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        effort = self.effort if self.efforts() else None
        self.dismiss((self.chosen().name, effort))

    def action_cancel(self) -> None:
        self.dismiss(None)
