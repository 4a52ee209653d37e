"""Compose a Certification without writing YAML: name, target, categories with their options, global
thresholds; live YAML and plan previews; load, save, submit.

The widgets hold the form; after every change the screen reads them into a Draft and hands it to
`nvcre_tui.compose.review`, which checks it with the engine. What it finds is shown next to each field
and, as the CLI's one-line messages, in the status line; submit is refused while any remain.
"""

from __future__ import annotations

import copy

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.highlight import highlight
from textual.widgets import Button, Footer, Header, Input, Label, Select, SelectionList, Static

from nvcre_tui.compose.form import Carried, CategoryDraft, Draft, draft_from_certification, left_out, repeated_categories
from nvcre_tui.compose.review import Review, review
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.planning.manifest import certification_from_text, read_text
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.paths import typed_path
from nvcre_tui.screens.base import NO_COMMAND_BAR, NvcreScreen
from nvcre_tui.screens.confirm import ConfirmModal
from nvcre_tui.screens.own_toasts import OwnToasts
from nvcre_tui.screens.path_prompt import PathModal, save_target, write_file
from nvcre_tui.widgets.category_list import CategoryList
from nvcre_tui.widgets.compose_fields import FIELD_CSS, CategoryOptionsPanel, ThresholdRow, show_message, update_changed
from nvcre_tui.widgets.compose_text import plan_text, status_text

# Buttons that run a mutating action: hidden when the policy refuses it (read-only mode).
MUTATING_BUTTONS = {"submit": "#submit", "load_file": "#load", "save_file": "#save"}


class ComposeScreen(OwnToasts, NvcreScreen):
    """Build, check, preview and submit a Certification."""

    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="compose.submit", tooltip="Create the Certification (refused while the form has problems)"),
        Binding("ctrl+o", "load_file", "Load", id="compose.load", tooltip="Fill the form from a Certification YAML file"),
        Binding("f3", "load_default", "Default", id="compose.default", tooltip="Fill the form with the default burn-in certification"),
        Binding("f2", "save_file", "Save", id="compose.save", tooltip="Write the YAML preview to a file"),
        # Out of the footer (its "+ threshold" button sits by the thresholds): on 80 columns the footer cut esc Back off.
        Binding("ctrl+n", "add_threshold", "Add threshold", show=False, id="compose.add_threshold", tooltip="A new global threshold row (metric + CEL)"),
        Binding("escape", "back", "Back", id="compose.back", tooltip="Leave (a changed form asks before it is discarded)"),
        # Its fields take `?` and `q` as text: F1 is how this screen's keys are found (the app's binding, in the footer here).
        # `?` too, one action with it, so that the footer says one: out of a field it read both "? Keys" (the app's
        # binding) and "f1 Keys". `?` first: said there as on every screen; in a field, which types it, F1.
        Binding("question_mark,f1", "app.help", "Keys", id="compose.help", tooltip="Every key binding"),
        NO_COMMAND_BAR,
    ]
    DEFAULT_CSS = FIELD_CSS + """
    ComposeScreen #compose-body { height: 1fr; }
    ComposeScreen #form { width: 1fr; padding: 0 1; }
    ComposeScreen #previews { width: 45%; border-left: solid $panel; }
    ComposeScreen .section { text-style: bold; color: $primary; margin: 1 0 0 0; }
    ComposeScreen #form > .section:first-of-type { margin: 0; }
    ComposeScreen #previews .section { padding: 0 1; margin: 0; }
    ComposeScreen #plan-title { width: 100%; border-top: solid $panel; }
    ComposeScreen #yaml-box { height: 1fr; padding: 0 1; }
    ComposeScreen #plan-box { height: auto; max-height: 50%; padding: 0 1; }
    ComposeScreen #categories { max-height: 10; }
    ComposeScreen #category-options { height: auto; margin: 1 0 0 0; }
    ComposeScreen #thresholds { height: auto; }
    ComposeScreen #carried { color: $text-muted; height: auto; margin: 1 0 0 0; }
    ComposeScreen #actions { height: auto; max-height: 8; border-top: solid $panel; padding: 0 1; }
    ComposeScreen #status { width: 1fr; height: auto; max-height: 7; overflow-y: auto; }
    ComposeScreen #actions Button { margin: 0 0 0 1; min-width: 8; }  /* the status keeps the width on 60 columns */
    ComposeScreen #actions.-problems #submit { background: $panel; color: $text-muted; }
    ComposeScreen Input.-textual-compact:focus, ComposeScreen Select.-textual-compact:focus > SelectCurrent { background-tint: $accent 15%; }
    /* Notifications top right, over the YAML preview and no wider: at the bottom (Textual's place) they covered Load,
       Save and Submit and the status on 80x24 for their 5 seconds, after F3 and a refused ctrl+s alike. */
    ComposeScreen ToastRack { dock: top; align: right top; margin: 0; }
    ComposeScreen ToastRack Toast { max-width: 42%; }  /* of the rack, less its scrollbar: inside the preview at 80 and 120 columns */
    """

    def __init__(self) -> None:
        super().__init__()
        self.review: Review | None = None
        self._carried = Carried()
        self._pending = False
        self._last_path = ""
        self._baseline = Draft()  # what escape may discard without asking (see changed())
        self._unticked: dict[str, dict[str, str]] = {}  # options typed for a category then unticked: back on re-tick

    @property
    def catalog(self) -> Catalog:
        """The catalog the engine runs with."""
        assert self.nvcre.session is not None
        return self.nvcre.session.catalog

    def compose(self) -> ComposeResult:
        entries = sorted(self.catalog.entries.values(), key=lambda e: e.key)
        yield Header()
        with Horizontal(id="compose-body"):
            with VerticalScroll(id="form"):
                yield Label("Name", classes="section")
                yield Input(placeholder="certification name: a DNS name such as rack-12-burn-in", compact=True, id="name")
                yield Static(classes="field-msg", id="name-msg", markup=False)
                yield Label("Target", classes="section")
                yield Input(placeholder="label selector, e.g. nvidia.com/gpu.clique=clique-0 or k in (a,b); empty = all", compact=True, id="selector")
                yield Static(classes="field-msg", id="selector-msg", markup=False)
                yield Input(placeholder="node names (optional, comma separated)", compact=True, id="node-names")
                yield Static(classes="field-msg", id="names-msg", markup=False)
                yield Label("Categories", classes="section")
                yield CategoryList([(e.key, e.title) for e in entries], id="categories")
                yield Vertical(id="category-options")
                yield Label("Thresholds · global (spec.options)", classes="section")
                yield Vertical(id="thresholds")
                yield Button("+ threshold", compact=True, id="add-threshold")
                yield Static(id="carried", markup=False)
            with Vertical(id="previews"):
                yield Label("YAML", classes="section")
                with VerticalScroll(id="yaml-box"):
                    yield Static(id="yaml")
                yield Label("Plan on today's nodes", classes="section", id="plan-title")
                with VerticalScroll(id="plan-box"):
                    yield Static(id="plan")
        with Horizontal(id="actions"):
            yield Static(id="status")
            yield Button("Load…", compact=True, id="load")
            yield Button("Save…", compact=True, id="save")
            yield Button("Submit", compact=True, variant="primary", id="submit")
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        for action, button in MUTATING_BUTTONS.items():
            self.query_one(button).display = self.nvcre.policy.allows(action)
        self.query_one("#carried").display = False
        self.query_one("#name", Input).focus()
        super().on_mount()
        if self.nvcre.asks_rights() and self.nvcre.session is not None:
            self.run_worker(self._may_submit(self.nvcre.session.namespace), group="compose-rights", exit_on_error=False)

    async def _may_submit(self, namespace: str) -> None:
        """Said as the form opens, not after it is filled in: a user RBAC refuses certifications' create (a view role)
        composes to save the YAML at most, and Submit is off."""
        if (refused := await self.nvcre.rbac_refuses("create", "creating", namespace)) is not None:
            self.query_one("#submit", Button).disabled = True
            self.notify(refused, severity="warning", title="cannot submit", markup=False)

    # ------------------------------------------------------------------ reading and checking the form

    def read_draft(self) -> Draft:
        """What the widgets hold now; categories in the order they were selected."""
        panels = {panel.entry.key: panel for panel in self.query(CategoryOptionsPanel)}
        selected = self.query_one("#categories", SelectionList).selected
        return Draft(
            name=self.query_one("#name", Input).value, selector=self.query_one("#selector", Input).value,
            node_names=self.query_one("#node-names", Input).value,
            categories=tuple(panels[key].draft() if key in panels else CategoryDraft(key) for key in selected),
            thresholds=tuple(row.draft() for row in self.query(ThresholdRow)),
        )

    def show(self, snapshot: Snapshot) -> None:
        self.schedule_check()

    def on_resize(self) -> None:
        self.schedule_check()  # the problems wrapped again to the new width

    def schedule_check(self) -> None:
        """Check once after the current burst of changes (loading a file changes many fields at once)."""
        if not self._pending:
            self._pending = True
            self.call_later(self.check)

    def check(self) -> Review:
        """Review the form now and show the result."""
        self._pending = False
        snapshot = self.nvcre.snapshot
        taken = [str(cert["metadata"]["name"]) for cert in snapshot.certifications] if snapshot else []
        self.review = review(self.read_draft(), self._carried, None if self.nodes_withheld() else snapshot.nodes if snapshot else [],
                             self.catalog, taken)
        self._show_review(self.review)
        return self.review

    def _show_review(self, result: Review) -> None:
        draft_name = self.query_one("#name", Input).value
        show_message(self.query_one("#name-msg", Static), result.name_message if draft_name else None)
        self.query_one("#name", Input).set_class(bool(draft_name and result.name_message), "-invalid")
        selector_line = self.query_one("#selector-msg", Static)
        if result.selector_message:
            show_message(selector_line, result.selector_message)
        else:
            show_message(selector_line, result.match_text, style="warning" if result.matched == 0 else "ok")
        self.query_one("#selector", Input).set_class(bool(result.selector_message), "-invalid")
        unknown = ", ".join(result.unknown_names)
        names_line = self.query_one("#names-msg", Static)
        if result.names_message:
            show_message(names_line, result.names_message)
        else:
            show_message(names_line, unknown and f"not in today's nodes: {unknown}", style="warning")
        self.query_one("#node-names", Input).set_class(bool(result.names_message), "-invalid")
        for panel in self.query(CategoryOptionsPanel):
            panel.show_messages({alias: m for (key, alias), m in result.option_messages.items() if key == panel.entry.key})
        for row, message in zip(self.query(ThresholdRow), result.threshold_messages, strict=False):
            row.set_metrics(result.metrics)
            row.show_message(message)
        update_changed(self.query_one("#yaml", Static), highlight(result.yaml.rstrip(), language="yaml"))
        update_changed(self.query_one("#plan", Static), plan_text(result))
        status = self.query_one("#status", Static)
        update_changed(status, status_text(result, status.scrollable_content_region.width))
        self.query_one("#actions").set_class(bool(result.problems), "-problems")

    @on(Input.Changed)
    @on(Select.Changed)
    def _field_changed(self) -> None:
        self.schedule_check()

    @on(SelectionList.SelectedChanged, "#categories")
    async def _categories_changed(self) -> None:
        await self._sync_panels({})
        self.schedule_check()

    async def _sync_panels(self, values: dict[str, dict[str, str]]) -> None:
        """One options panel per selected category, in selection order; kept panels keep their text, and an unticked
        one's typed options come back when it is ticked again (a slip of the space bar must not lose them)."""
        container = self.query_one("#category-options")
        selected = self.query_one("#categories", SelectionList).selected
        present = {panel.entry.key: panel for panel in container.query(CategoryOptionsPanel)}
        for key, panel in present.items():
            if key not in selected:
                if typed := {alias: text for alias, text in panel.draft().options.items() if text.strip()}:
                    self._unticked[key] = typed
                await panel.remove()
        new = [CategoryOptionsPanel(self.catalog.entries[key], values.get(key) or self._unticked.pop(key, None))
               for key in selected if key not in present]
        if new:
            await container.mount_all(new)

    # ------------------------------------------------------------------ thresholds

    async def action_add_threshold(self) -> None:
        """A new empty threshold row, focused."""
        metrics = self.review.metrics if self.review else ()
        row = ThresholdRow(metrics)
        await self.query_one("#thresholds").mount(row)
        row.query_one("Select").focus()
        self.schedule_check()

    @on(Button.Pressed, "#add-threshold")
    async def _add_pressed(self) -> None:
        await self.action_add_threshold()

    @on(Button.Pressed, ".remove-threshold")
    async def _remove_pressed(self, event: Button.Pressed) -> None:
        row = next(a for a in event.button.ancestors if isinstance(a, ThresholdRow))
        await row.remove()
        self.schedule_check()

    # ------------------------------------------------------------------ submit, load, save

    async def action_submit(self) -> None:
        """Create the Certification, or say why not; back to the previous screen when it is created."""
        result = self.check()
        if result.problems:
            count = len(result.problems)
            self.notify(f"{count} problem{'s' if count != 1 else ''}, first: {result.problems[0]}", title="not submitted", severity="error", markup=False)
            return
        if await self.nvcre.submit(copy.deepcopy(result.body)):
            self.app.pop_screen()

    @on(Button.Pressed, "#submit")
    async def _submit_pressed(self) -> None:
        await self.run_action("submit")

    async def action_load_default(self) -> None:
        """Fill the form with the catalog's default certification (its _defaults/certification.yaml)."""
        path = self.catalog.root / "_defaults" / "certification.yaml"  # the catalog in use (a site's: $NVCRE_CATALOG_DIR)
        try:  # a catalog directory ($NVCRE_CATALOG_DIR) is input like any file: missing, damaged or invalid
            default = certification_from_text(*read_text(str(path)), self.catalog)
        except InputError as error:
            self.notify(printable("; ".join(error.messages)), severity="error", title="default certification not loaded", markup=False)
            return
        await self.fill(default)
        self._baseline = self.read_draft()  # F3 gives it back
        self.notify("default certification: every node alone over NVLink and over its NICs")

    def action_load_file(self) -> None:
        """Ask for a Certification file and fill the form from it."""
        self.app.push_screen(PathModal("Load a Certification", "Load", self._read_certification, self._last_path), self._fill_callback)

    @on(Button.Pressed, "#load")
    async def _load_pressed(self) -> None:
        await self.run_action("load_file")

    def _read_certification(self, path: str) -> tuple[str, Certification]:
        name, text = read_text(path)
        return path, certification_from_text(name, text, self.catalog)

    async def _fill_callback(self, loaded: tuple[str, Certification] | None) -> None:
        if loaded is not None:
            path, cert = loaded
            await self.fill(cert)
            self._last_path = path
            self._baseline = self.read_draft()  # the file has it
            self.notify(printable(f"loaded {path}"), markup=False)

    async def fill(self, cert: Certification) -> None:
        """Replace the whole form with a parsed Certification."""
        draft, self._carried = draft_from_certification(cert)
        self._unticked.clear()
        for widget_id, value in (("name", draft.name), ("selector", draft.selector), ("node-names", draft.node_names)):
            self.query_one(f"#{widget_id}", Input).value = value
        await self.query_one("#category-options").remove_children()
        selection = self.query_one("#categories", SelectionList)
        selection.deselect_all()
        for item in draft.categories:
            selection.select(item.key)
        await self._sync_panels({item.key: item.options for item in draft.categories})
        await self.query_one("#thresholds").remove_children()
        metrics = self.review.metrics if self.review else ()
        await self.query_one("#thresholds").mount_all([ThresholdRow(metrics, row) for row in draft.thresholds])
        carried = self._carried.paths()
        self.query_one("#carried", Static).update("Kept from the file as written (not editable here): " + ", ".join(carried))
        self.query_one("#carried").display = bool(carried)
        for key in repeated_categories(cert):
            self.notify(f"{key} is listed more than once in the file; the form keeps the first", severity="warning", markup=False)
        self.schedule_check()

    def action_save_file(self) -> None:
        """Write the YAML preview to a file (a form with problems is saved too, and says so)."""
        if not self.nvcre.policy.allows("save_file"):  # a direct call, past the hidden binding and button
            self.notify("read-only: saving a file is refused", severity="warning", title="not saved")
            return
        name = self.query_one("#name", Input).value.strip() or "certification"
        self.app.push_screen(PathModal("Save the Certification as YAML", "Save", save_target, self._last_path or f"{name}.yaml"), self._save_to)

    @on(Button.Pressed, "#save")
    async def _save_pressed(self) -> None:
        await self.run_action("save_file")

    def _save_to(self, path: str | None) -> None:
        """Write to a checked path; an existing file is replaced only when the user says yes."""
        if path is None or not self.nvcre.policy.allows("save_file"):  # e.g. a prompt answered after the mode changed
            return
        if typed_path(path).exists():  # checked by save_target (a ~user that names no user said there); never replace a file (the state file, another YAML) without asking
            self.app.push_screen(ConfirmModal(f"{path} exists. Overwrite it?", yes="Overwrite", no="Keep it"),
                                 lambda yes: self._write_yaml(path) if yes else self.notify(printable(f"kept {path}; not saved"), markup=False))
            return
        self._write_yaml(path)

    def _write_yaml(self, path: str) -> None:
        lost = left_out(self.read_draft())
        if lost:  # a file without them would load, and target (or judge) something else than the form says
            self.notify(printable(f"not saved: {lost[0]}" + (f" (and {len(lost) - 1} more)" if len(lost) > 1 else "")
                                  + "; the file could not hold it"), severity="error", title="not saved", markup=False)
            return
        result = self.check()
        try:
            write_file(path, result.yaml)
        except InputError as error:
            self.notify(printable("; ".join(error.messages)), severity="error", title="not saved", markup=False)
            return
        self._last_path = path
        self._baseline = self.read_draft()  # on disk now: escape loses nothing
        problems = len(result.problems)
        if problems:
            self.notify(printable(f"saved {path}; it has {problems} problem(s) and will not load until they are fixed"), severity="warning", markup=False)
        else:
            self.notify(printable(f"saved {path}"), markup=False)

    # ------------------------------------------------------------------ leaving

    def changed(self) -> bool:
        """Whether the form holds something not on disk: it differs from when it was opened, loaded or saved."""
        return self.read_draft() != self._baseline

    def unsaved(self) -> str | None:
        return "the certification being composed is not saved or submitted" if self.changed() else None

    def action_back(self) -> None:
        """Leave; a changed form asks first (the default answer keeps it)."""
        if not self.changed():
            self.app.pop_screen()
            return
        def answered(discard: bool | None) -> None:
            if discard:
                self.app.pop_screen()

        self.app.push_screen(ConfirmModal("Discard the changes to this certification?", yes="Discard", no="Keep editing"), answered)
