"""What the terminal shows: the rendered rows of the app's current screen, for assertions.

Text that is clipped, collapsed, scrolled away or hidden behind a modal is not
in these rows, unlike the widgets' source strings. The rows come from the
render ``App.export_screenshot`` (and so every SVG snapshot) uses: the current
screen's compositor, with the screens visible behind a translucent modal, as
strips of cells; only the cells' text is kept.
"""

from __future__ import annotations

from textual.app import App
from textual.errors import NoWidget
from textual.strip import Strip
from textual.widget import Widget


def screen_strips(app: App[object]) -> list[Strip]:
    """One strip of cells per row of the terminal, as the app would paint it now."""
    # Textual has no public text export; this is export_screenshot's render without the SVG.
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    rows = getattr(update, "strips", None)
    if rows is None:
        raise AssertionError(f"the compositor gave no full update: {update!r}")
    return [Strip.join(row) for row in rows]


def screen_lines(app: App[object]) -> list[str]:
    """The screen as the terminal would show it now, one string per row (trailing blanks cut)."""
    return [strip.text.rstrip() for strip in screen_strips(app)]


def screen_text(app: App[object]) -> str:
    """The screen's rows joined by newlines: what a user could read right now."""
    return "\n".join(screen_lines(app))


def screen_words(app: App[object]) -> str:
    """The screen's text with every run of whitespace as one space, for phrases that wrap."""
    return " ".join(screen_text(app).split())


def widget_lines(app: App[object], widget: Widget) -> list[str]:
    """The rows of the screen inside the visible part of ``widget`` (none if it is not shown)."""
    try:
        region = widget.screen.find_widget(widget).visible_region
    except NoWidget:
        return []
    if region.area == 0:
        return []
    rows = screen_strips(app)[region.y : region.bottom]
    return [row.crop(region.x, region.right).text.rstrip() for row in rows]


def widget_text(app: App[object], widget: Widget) -> str:
    """What the screen shows of ``widget``, its rows joined by newlines."""
    return "\n".join(widget_lines(app, widget))
