"""Compose-form widgets: one category's options, one threshold row. Each reads back as draft data and
shows messages the screen hands it; neither checks anything itself (nvcre_tui.compose.review does)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.visual import VisualType
from textual.widgets import Button, Input, Label, Select, Static

from nvcre_tui.compose.form import CategoryDraft, ThresholdDraft, fields_for
from nvcre_tui.engine.planning.catalog import CatalogEntry

FIELD_CSS = """
.field-msg { color: $error; height: auto; padding: 0 0 0 1; }
.field-msg.-ok { color: $text-muted; }
.field-msg.-warning { color: $warning; }
"""

OPTION_PLACEHOLDERS = {
    "nodesPerJob": "auto", "minGroupSize": "catalog default", "maxConcurrent": "default; 0 = all",
    "repeatCount": "1", "timeoutPerJob": "default, e.g. 30m",
}


def panel_id(key: str) -> str:
    """A DOM id for a catalog key (ids cannot hold '/')."""
    return "cat-" + key.replace("/", "--")


def update_changed(widget: Static, content: VisualType) -> None:
    """Update only when the content differs: every update re-lays out the screen, and this runs per keystroke."""
    if widget.content != content:
        widget.update(content)


def show_message(widget: Static, message: str | None, *, style: str = "") -> None:
    """Show a one-line message under a field, or hide the line when there is none."""
    update_changed(widget, message or "")
    widget.display = bool(message)
    widget.set_class(style == "ok", "-ok")
    widget.set_class(style == "warning", "-warning")


class CategoryOptionsPanel(Vertical):
    """The form options of one selected category: testScale limited to the entry's scales, numbers, onFailure."""

    DEFAULT_CSS = FIELD_CSS + """
    CategoryOptionsPanel { height: auto; margin: 0 0 1 0; }
    CategoryOptionsPanel .panel-title { width: 100%; }  /* wraps: on 80 columns it was cut at the form's edge ("· NCCL al") */
    CategoryOptionsPanel .option-row { height: auto; }
    CategoryOptionsPanel .option-row Label { width: 16; color: $text-muted; }
    CategoryOptionsPanel .option-row Input, CategoryOptionsPanel .option-row Select { width: 24; }  /* whole on 80 columns */
    CategoryOptionsPanel .option-row .field-msg { width: 1fr; }
    """

    def __init__(self, entry: CatalogEntry, values: dict[str, str] | None = None) -> None:
        super().__init__(id=panel_id(entry.key))
        self.entry = entry
        self.fields = fields_for(entry, values)
        self._initial = values or {}

    def compose(self) -> ComposeResult:
        yield Label(f"{self.entry.key} · {self.entry.title}", classes="panel-title", markup=False)  # a catalog title is the user's text
        for spec in self.fields:
            value = self._initial.get(spec.alias, "")
            with Horizontal(classes="option-row"):
                yield Label(spec.label)
                if spec.kind in ("scale", "choice"):
                    choices = self.entry.test_scales if spec.kind == "scale" else spec.choices
                    yield Select([(choice, choice) for choice in choices], prompt=f"default ({choices[0]})", value=value or Select.NULL,
                                 compact=True, id=f"opt-{spec.alias}")
                else:
                    yield Input(value, placeholder=OPTION_PLACEHOLDERS.get(spec.alias, ""), compact=True, id=f"opt-{spec.alias}")
                yield Static(classes="field-msg", id=f"msg-{spec.alias}", markup=False)

    @property
    def composed(self) -> bool:
        """Whether the fields are mounted: a review scheduled before this panel was added may run in between."""
        return bool(self.query(f"#msg-{self.fields[-1].alias}"))

    def draft(self) -> CategoryDraft:
        """The raw text of every option ("" = not set); the values it was made with while still being mounted."""
        if not self.composed:
            return CategoryDraft(self.entry.key, dict(self._initial))
        values = {alias: text for alias, text in self._initial.items() if alias not in {f.alias for f in self.fields}}
        for spec in self.fields:
            widget = self.query_one(f"#opt-{spec.alias}")
            if isinstance(widget, Select):
                values[spec.alias] = "" if widget.value is Select.NULL else str(widget.value)
            else:
                assert isinstance(widget, Input)
                values[spec.alias] = widget.value
        return CategoryDraft(self.entry.key, values)

    def show_messages(self, messages: dict[str, str]) -> None:
        """Per-field messages by option alias; fields not named are valid. Nothing while still being mounted."""
        if not self.composed:
            return
        for spec in self.fields:
            message = messages.get(spec.alias)
            show_message(self.query_one(f"#msg-{spec.alias}", Static), message)
            self.query_one(f"#opt-{spec.alias}").set_class(bool(message), "-invalid")


def _choices(metrics: tuple[str, ...], current: str) -> tuple[str, ...]:
    """The metrics to offer; the row's own pick stays even when nothing selected measures it (its message says so)."""
    return metrics if not current or current in metrics else (*metrics, current)


class ThresholdRow(Vertical):
    """metric  [CEL expression]  ✕, with the expression's problem on the line below."""

    DEFAULT_CSS = FIELD_CSS + """
    ThresholdRow { height: auto; }
    ThresholdRow > Horizontal { height: auto; }
    ThresholdRow Select { width: 20; }  /* the longest metric whole; the rest to the expression (12 cells on 80 columns at 24) */
    ThresholdRow Input { width: 1fr; }
    ThresholdRow Button { min-width: 3; width: 3; margin: 0 0 0 1; }
    """

    def __init__(self, metrics: tuple[str, ...], row: ThresholdDraft | None = None) -> None:
        super().__init__(classes="threshold-row")
        self._row = row or ThresholdDraft()
        self._metrics = _choices(metrics, self._row.metric)

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Select([(m, m) for m in self._metrics], prompt="metric", value=self._row.metric or Select.NULL, compact=True)
            yield Input(self._row.expression, placeholder="CEL over value, e.g. value >= 400", compact=True)
            yield Button("✕", compact=True, classes="remove-threshold", tooltip="Remove this threshold")
        yield Static(classes="field-msg", markup=False)

    @property
    def composed(self) -> bool:
        """Whether the fields are mounted: a review scheduled before this row was added may run in between. The
        Horizontal's own children mount after it and after the message line, so each field is looked for."""
        return bool(self.query(".field-msg")) and bool(self.query(Select)) and bool(self.query(Input))

    def draft(self) -> ThresholdDraft:
        """(metric or "", expression); the row it was made with while its fields are still being mounted (a review
        scheduled earlier may run in between)."""
        if not self.composed:
            return self._row
        metric = self.query_one(Select).value
        return ThresholdDraft("" if metric is Select.NULL else str(metric), self.query_one(Input).value)

    def set_metrics(self, metrics: tuple[str, ...]) -> None:
        """Offer the metrics the selected categories measure (keeping the current pick)."""
        if not self.composed:  # compose() offers these
            self._metrics = _choices(metrics, self._row.metric)
            return
        select, current = self.query_one(Select), self.draft().metric
        choices = _choices(metrics, current)
        if choices == self._metrics:
            return
        self._metrics = choices
        select.set_options([(m, m) for m in choices])
        if current:
            select.value = current

    def show_message(self, message: str | None) -> None:
        """The row's problem, or nothing (nothing to show it on while still being mounted)."""
        if not self.composed:
            return
        show_message(self.query_one(".field-msg", Static), message)
        self.query_one(Input).set_class(bool(message), "-invalid")
