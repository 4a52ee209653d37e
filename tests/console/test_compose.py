"""The compose screen: typing a Certification field by field with live checks and previews, submit
(refused while invalid, refused in read-only mode), load and save round trips, and one snapshot.

Deterministic: the default simulated fleet on a ManualClock, no live engine (live=False)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Label, Select, SelectionList, Static
from textual.widgets._footer import FooterKey
from textual.widgets._select import InvalidSelectValueError

from nvcre_tui.app import NvcreApp
from nvcre_tui.compose.form import Draft, ThresholdDraft, certification_body, draft_from_certification, fields_for, selector_text, target_body
from nvcre_tui.compose.form import parse_selector as parse_form_selector
from nvcre_tui.engine.api.bodies import TargetSpec
from nvcre_tui.engine.api.nodes import node_labels
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.compose import ComposeScreen
from nvcre_tui.widgets.compose_fields import CategoryOptionsPanel, ThresholdRow, panel_id
from tests.console.harness import DIAGNOSE

CLIQUE = "nvidia.com/gpu.clique"
ALL_REDUCE = "communication/nccl-all-reduce"
BAD_CEL = 'invalid CEL expression "value >= ": unexpected end of expression'

LOADED = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata:
  name: burn-in-r1
  labels: {team: infra}
spec:
  target:
    nodeSelector: {nvidia.com/gpu.present: "true"}
    matchExpressions:
      - {key: nvidia.com/gpu.clique, operator: In, values: [clique-0, clique-1]}
    nodeNames: [gpu-node-01, gpu-node-02, gpu-node-09]
  gangScheduler: {schedulerName: kai-scheduler}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: intra-node, maxConcurrent: 4, image: "nvcr.io/nvidia/nccl:1"}
    - domain: diagnostics
      variant: dcgm-level4
  maxBytes: 8G
  options:
    thresholds: {busBandwidthGBps: "value >= 350"}
"""


async def open_compose(read_only: bool = False) -> NvcreApp:
    session = await SimSession.open(default_scenario(), None)
    return NvcreApp(session=session, live=False, read_only=read_only)


async def push_compose(app: NvcreApp, pilot: Pilot[Any]) -> ComposeScreen:
    await app.push_screen(ComposeScreen())
    await pilot.pause()
    assert isinstance(app.screen, ComposeScreen)
    return app.screen


async def type_into(pilot: Pilot[Any], widget: Input, text: str, typed: int = 3) -> None:
    """Focus, set all but the last `typed` characters, and type those as keys (each one is checked live).

    Typing every character would cost a layout pass per key; the last few exercise the same path."""
    widget.focus()
    await pilot.pause()  # focusing selects the whole value (select_on_focus); set it after that
    widget.value = text[: max(len(text) - typed, 0)]
    widget.cursor_position = len(widget.value)
    await pilot.press(*text[len(widget.value) :])
    await pilot.pause()


def shown(screen: Widget, selector: str) -> str:
    """The text a Static shows, or "" when it is hidden."""
    static = screen.query_one(selector, Static)
    return str(static.visual) if static.display else ""


async def certifications(app: NvcreApp) -> list[dict[str, Any]]:
    assert app.session is not None
    return (await app.session.store.list(CERTIFICATION)).items


async def select_category(pilot: Pilot[Any], screen: ComposeScreen, key: str) -> None:
    """Highlight the entry with the arrow keys and toggle it with space, as a user would."""
    selection = screen.query_one("#categories", SelectionList)
    selection.focus()
    target = next(i for i in range(selection.option_count) if selection.get_option_at_index(i).value == key)
    await pilot.press("home", *["down"] * target, "space")
    await pilot.pause()


class TestComposeFlow:
    async def test_type_check_preview_and_submit(self) -> None:
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            nodes = app.snapshot.nodes if app.snapshot else []
            clique0 = sum(1 for node in nodes if node_labels(node).get(CLIQUE) == "clique-0")

            await type_into(pilot, screen.query_one("#name", Input), "Rack_12")
            assert "must be a lowercase DNS name" in shown(screen, "#name-msg")
            await type_into(pilot, screen.query_one("#name", Input), "rack-12-burn-in")
            assert shown(screen, "#name-msg") == ""

            selector = screen.query_one("#selector", Input)
            await type_into(pilot, selector, f"{CLIQUE} in (clique-0")
            assert "unbalanced parentheses" in shown(screen, "#selector-msg")
            await type_into(pilot, selector, f"{CLIQUE}=clique-0")
            assert shown(screen, "#selector-msg") == f"{clique0} of {len(nodes)} nodes match"
            assert clique0 and clique0 < len(nodes)

            await select_category(pilot, screen, ALL_REDUCE)
            panel = screen.query_one(f"#{panel_id(ALL_REDUCE)}", CategoryOptionsPanel)
            scale = panel.query_one("#opt-testScale", Select)
            with pytest.raises(InvalidSelectValueError):
                scale.value = "no-such-scale"
            scale.value = "intra-node"
            await pilot.pause()

            await pilot.press("ctrl+n")
            await pilot.pause()
            row = screen.query_one(ThresholdRow)
            metric = row.query_one(Select)
            assert app.focused is metric
            with pytest.raises(InvalidSelectValueError):  # nccl measures bandwidth, not training goodput
                metric.value = "goodputRatio"
            metric.value = "busBandwidthGBps"
            await type_into(pilot, row.query_one(Input), "value >= ")
            assert shown(row, ".field-msg") == BAD_CEL

            await pilot.press("ctrl+s")
            await pilot.pause()
            assert isinstance(app.screen, ComposeScreen) and await certifications(app) == []
            status = shown(screen, "#status")
            assert "submit is refused" in status
            assert f"compose: spec.options.thresholds.busBandwidthGBps: {BAD_CEL}" in status

            await pilot.press(*"400")
            await pilot.pause()
            assert shown(row, ".field-msg") == ""
            assert shown(screen, "#status").startswith("✓ ready to submit rack-12-burn-in")

            preview = yaml.safe_load(shown(screen, "#yaml"))
            assert preview["metadata"]["name"] == "rack-12-burn-in"
            assert preview["spec"]["target"] == {"nodeSelector": {CLIQUE: "clique-0"}}
            assert preview["spec"]["categories"] == [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}]
            assert preview["spec"]["options"] == {"thresholds": {"busBandwidthGBps": "value >= 400"}}

            await type_into(pilot, selector, "nvidia.com/gpu.present=true")
            assert shown(screen, "#selector-msg") == f"{len(nodes)} of {len(nodes)} nodes match"
            assert f"{len(nodes)} groups × 1 node per job · {len(nodes)} eligible nodes" in shown(screen, "#plan")

            await pilot.press("ctrl+s")
            await pilot.pause()
            assert not isinstance(app.screen, ComposeScreen)
            [created] = await certifications(app)
            assert created["metadata"]["name"] == "rack-12-burn-in"
            spec = created["spec"]
            assert spec["target"] == {"nodeSelector": {"nvidia.com/gpu.present": "true"}}
            assert spec["categories"] == preview["spec"]["categories"]
            assert spec["options"]["thresholds"] == {"busBandwidthGBps": "value >= 400"}

    async def test_inline_messages_for_options_node_names_and_plan(self) -> None:
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            nodes = app.snapshot.nodes if app.snapshot else []
            name = screen.query_one("#name", Input)
            await type_into(pilot, name, "q?:", typed=3)  # app keys (quit, help, command bar) stay text in a field
            assert app.screen is screen and name.value == "q?:"
            await type_into(pilot, name, "options")
            await type_into(pilot, screen.query_one("#node-names", Input), "gpu-node-01, gpu-node-99")
            assert shown(screen, "#names-msg") == "not in today's nodes: gpu-node-99"
            await type_into(pilot, screen.query_one("#node-names", Input), "GPU-NODE-01")  # no node can be called that
            assert shown(screen, "#names-msg") == "must be a lowercase DNS name (a-z, 0-9, '-', '.'), got 'GPU-NODE-01'"
            assert screen.query_one("#node-names", Input).has_class("-invalid")
            await type_into(pilot, screen.query_one("#node-names", Input), "gpu-node-01, gpu-node-99")
            assert shown(screen, "#selector-msg") == f"1 of {len(nodes)} nodes match"
            await type_into(pilot, screen.query_one("#node-names", Input), "")
            await select_category(pilot, screen, ALL_REDUCE)
            panel = screen.query_one(CategoryOptionsPanel)
            await type_into(pilot, panel.query_one("#opt-maxConcurrent", Input), "-1")
            await type_into(pilot, panel.query_one("#opt-timeoutPerJob", Input), "5x")
            assert shown(panel, "#msg-maxConcurrent") == "must be >= 0"
            assert "must be a duration such as 90s" in shown(panel, "#msg-timeoutPerJob")
            assert "spec.categories[0].options.maxConcurrent: must be >= 0" in shown(screen, "#status")
            await type_into(pilot, panel.query_one("#opt-maxConcurrent", Input), "4")
            await type_into(pilot, panel.query_one("#opt-timeoutPerJob", Input), "30m")
            await type_into(pilot, panel.query_one("#opt-nodesPerJob", Input), str(len(nodes) * 2))
            too_many = f"{len(nodes) * 2} nodes per job but only {len(nodes)} eligible nodes match"
            assert f"cannot run: {too_many}" in shown(screen, "#plan")
            assert f"compose: spec.categories[0].options.nodesPerJob: {too_many}" in shown(screen, "#status")
            assert shown(panel, "#msg-nodesPerJob") == too_many  # at its field too, not only in the status line
            await type_into(pilot, panel.query_one("#opt-nodesPerJob", Input), "")
            await type_into(pilot, panel.query_one("#opt-minGroupSize", Input), "2")
            assert "does not read minGroupSize (read by testScale diagnose or onFailure: diagnose)" in shown(panel, "#msg-minGroupSize")
            await type_into(pilot, panel.query_one("#opt-minGroupSize", Input), "")
            await type_into(pilot, panel.query_one("#opt-nodesPerJob", Input), str(len(nodes) * 2))
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert await certifications(app) == []

    async def test_options_typed_for_an_unticked_category_come_back_when_it_is_ticked_again(self) -> None:
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await select_category(pilot, screen, ALL_REDUCE)
            await type_into(pilot, screen.query_one(CategoryOptionsPanel).query_one("#opt-repeatCount", Input), "3")
            await select_category(pilot, screen, ALL_REDUCE)  # a slip of the space bar
            assert not screen.query(CategoryOptionsPanel)
            assert "repeatCount" not in shown(screen, "#yaml")
            await select_category(pilot, screen, ALL_REDUCE)
            assert screen.query_one(CategoryOptionsPanel).query_one("#opt-repeatCount", Input).value == "3"
            assert "repeatCount: 3" in shown(screen, "#yaml")

    async def test_a_number_field_takes_what_a_file_takes(self) -> None:
        """int() reads ٣ as 3, the manifest loader does not: the form refuses it with the file's message."""
        in_file = LOADED.replace("maxConcurrent: 4", "maxConcurrent: ٣")
        with pytest.raises(InputError) as from_file:
            certification_from_text("cert.yaml", in_file, default_catalog())
        refused = "spec.categories[0].options.maxConcurrent: must be an integer, got '٣'"
        assert from_file.value.messages == [f"cert.yaml: {refused}"]
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await pilot.press("f3")
            await pilot.pause()
            panel = screen.query_one(CategoryOptionsPanel)
            field = panel.query_one("#opt-maxConcurrent", Input)
            for typed, said in (("٣", "'٣'"), ("3.0", "3.0"), ("1e3", "1000.0"), ("null", "'null'")):
                await type_into(pilot, field, typed, typed=1)
                # the field says the value as the file's check says it: the status line said 1000.0 beside its '1e3'
                assert shown(panel, "#msg-maxConcurrent") == f"must be an integer, got {said}"
                assert f"maxConcurrent: must be an integer, got {said}" in shown(screen, "#status")
            await type_into(pilot, field, "٣", typed=1)
            assert f"compose: {refused}" in shown(screen, "#status")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is screen and await certifications(app) == []
            await type_into(pilot, field, "3", typed=1)
            assert shown(panel, "#msg-maxConcurrent") == ""
            assert yaml.safe_load(shown(screen, "#yaml"))["spec"]["categories"][0]["options"]["maxConcurrent"] == 3

    async def test_a_name_too_long_for_a_label_is_said_at_its_field(self) -> None:
        """70 characters: the status line said "must be at most 63 characters", the field nothing."""
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await type_into(pilot, screen.query_one("#name", Input), "a" * 70)
            assert shown(screen, "#name-msg") == "must be at most 63 characters (it becomes a label value)"
            await type_into(pilot, screen.query_one("#name", Input), "a" * 63)
            assert shown(screen, "#name-msg") == ""

    async def test_a_name_with_surrounding_spaces_is_refused_as_in_a_file(self) -> None:
        """`name: " x "` in a file is refused by `nvcre certification run`; the form refuses it too, never trims it."""
        refused = "metadata.name: must be a lowercase DNS name (a-z, 0-9, '-', '.'), got ' spaced '"
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await pilot.press("f3")
            await pilot.pause()
            assert shown(screen, "#status").startswith("✓ ready to submit")
            name = screen.query_one("#name", Input)
            await type_into(pilot, name, " spaced ")
            assert shown(screen, "#name-msg") == refused.removeprefix("metadata.name: ")
            assert f"compose: {refused}" in shown(screen, "#status")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is screen and await certifications(app) == []
            with pytest.raises(InputError, match=f"cert.yaml: {re.escape(refused)}"):
                certification_from_text("cert.yaml", shown(screen, "#yaml"), default_catalog())


class TestLoadAndSave:
    async def test_load_fills_the_form_and_save_round_trips(self, tmp_path: Path) -> None:
        source, saved = tmp_path / "in.yaml", tmp_path / "out.yaml"
        source.write_text(LOADED)
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await pilot.press("ctrl+o")
            await pilot.pause()
            await type_into(pilot, app.screen.query_one("#path", Input), str(tmp_path / "missing.yaml"))
            await pilot.press("enter")
            await pilot.pause()
            assert f"{tmp_path / 'missing.yaml'}: no such file" in shown(app.screen, "#path-error")
            await type_into(pilot, app.screen.query_one("#path", Input), str(source))
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is screen
            assert screen.query_one("#name", Input).value == "burn-in-r1"
            assert screen.query_one("#selector", Input).value == "nvidia.com/gpu.present=true,nvidia.com/gpu.clique in (clique-0,clique-1)"
            assert screen.query_one("#categories", SelectionList).selected == [ALL_REDUCE, "diagnostics/dcgm-level4"]
            panel = screen.query_one(f"#{panel_id(ALL_REDUCE)}", CategoryOptionsPanel)
            assert panel.query_one("#opt-maxConcurrent", Input).value == "4"
            assert screen.query_one(ThresholdRow).draft().expression == "value >= 350"
            assert "spec.gangScheduler" in shown(screen, "#carried")
            assert "not in today's nodes" not in shown(screen, "#names-msg")

            await pilot.press("f2")
            await pilot.pause()
            await type_into(pilot, app.screen.query_one("#path", Input), str(saved))
            await pilot.press("enter")
            await pilot.pause()
        catalog = default_catalog()
        before = certification_from_text("in", LOADED, catalog).to_wire()
        after = certification_from_text("out", saved.read_text(), catalog).to_wire()
        # Inline global options are written under spec.options, as the project writes them.
        before["spec"]["options"]["maxBytes"] = before["spec"].pop("maxBytes")
        assert after == before

    async def test_a_form_a_file_could_not_hold_is_not_saved(self, tmp_path: Path) -> None:
        """F2 with a selector that does not parse wrote `target: {}` (every node) and said the file would not load;
        it loaded, and ran on the whole fleet."""
        from nvcre_tui.compose.form import Draft, ThresholdDraft, left_out

        saved = tmp_path / "out.yaml"
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await type_into(pilot, screen.query_one("#selector", Input), "nvidia.com/gpu.clique in (clique-0")
            await pilot.press("f2")
            await pilot.pause()
            await type_into(pilot, app.screen.query_one("#path", Input), str(saved))
            await pilot.press("enter")
            await pilot.pause()
        assert not saved.exists()
        assert left_out(Draft(selector="nvidia.com/gpu.clique in (clique-0"))[0].startswith("node selector: ")
        rows = (ThresholdDraft("", "value >= 1"), ThresholdDraft("busBandwidthGBps", "value >= 2"), ThresholdDraft("busBandwidthGBps", "value >= 3"))
        assert left_out(Draft(thresholds=rows)) == ["threshold 'value >= 1': pick its metric", "threshold busBandwidthGBps: a second row for it"]
        assert left_out(Draft(selector="nvidia.com/gpu.present=true", thresholds=rows[1:2])) == []

    async def test_a_bad_file_is_explained_in_the_modal_and_changes_nothing(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.yaml"
        bad.write_text(LOADED.replace("testScale: intra-node", "testScale: sideways").replace("burn-in-r1", "Burn_In"))
        app = await open_compose()
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await pilot.press("ctrl+o")
            await pilot.pause()
            await type_into(pilot, app.screen.query_one("#path", Input), str(bad))
            await pilot.press("enter")
            await pilot.pause()
            error = shown(app.screen, "#path-error")
            assert f"{bad}: metadata.name: must be a lowercase DNS name" in error
            assert f"{bad}: spec.categories[0].options.testScale: must be one of" in error
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen and screen.query_one("#name", Input).value == ""


class TestSaveOverAnExistingFile:
    """Saving over a file asks first; the default answer (enter, n, escape) keeps the file."""

    @staticmethod
    async def _answer_path(pilot: Pilot[Any], app: NvcreApp, path: Path) -> None:
        """Type `path` into the open path modal and press enter (the typing itself is tested elsewhere)."""
        app.screen.query_one("#path", Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()

    async def test_an_existing_file_is_kept_unless_the_user_says_yes(self, tmp_path: Path) -> None:
        from nvcre_tui.screens.confirm import ConfirmModal

        target = tmp_path / "mine.yaml"
        target.write_text("precious\n")
        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await push_compose(app, pilot)
            await screen.fill(certification_from_text("x", LOADED, default_catalog()))
            for keep in ("enter", "n", "escape", "y"):  # "Keep it" has the focus: enter is the safe answer
                await pilot.press("f2")
                await pilot.pause()
                await self._answer_path(pilot, app, target)
                assert isinstance(app.screen, ConfirmModal), keep
                assert str(target) in str(app.screen.query_one("#question", Label).visual)
                await pilot.press(keep)
                await pilot.pause()
                assert app.screen is screen
                if keep != "y":
                    assert target.read_text() == "precious\n", keep
        assert certification_from_text("out", target.read_text(), default_catalog()).metadata.name == "burn-in-r1"
        assert [p.name for p in tmp_path.iterdir()] == ["mine.yaml"]  # written atomically: no temporary file left

    async def test_a_new_file_is_written_without_asking_and_a_folder_is_refused_in_the_modal(self, tmp_path: Path) -> None:
        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await push_compose(app, pilot)
            await screen.fill(certification_from_text("x", LOADED, default_catalog()))
            await pilot.press("f2")
            await pilot.pause()
            await self._answer_path(pilot, app, tmp_path)
            assert f"{tmp_path}: is a directory, not a file" in shown(app.screen, "#path-error")
            await self._answer_path(pilot, app, tmp_path / "new" / "cert.yaml")  # the modal stays open for another try
            assert app.screen is screen
        assert "burn-in-r1" in (tmp_path / "new" / "cert.yaml").read_text()


class TestLeaving:
    async def test_escape_leaves_an_unchanged_form_at_once_and_asks_for_a_changed_one(self) -> None:
        from nvcre_tui.screens.confirm import ConfirmModal

        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            base = app.screen
            await push_compose(app, pilot)
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is base  # nothing typed: nothing to lose
            screen = await push_compose(app, pilot)
            screen.query_one("#name", Input).value = "half-typed"
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmModal)
            await pilot.press("enter")  # the default keeps the form
            await pilot.pause()
            assert app.screen is screen and screen.query_one("#name", Input).value == "half-typed"
            await pilot.press("escape", "y")
            await pilot.pause()
            assert app.screen is base

    async def test_quitting_with_a_changed_form_asks_first(self) -> None:
        """q (offered in the footer wherever focus is not in a text field) quit and threw a changed form away, while
        escape asked (a review found it); quitting asks as escape does, Stay being the default answer."""
        from nvcre_tui.app import QuitQuestion

        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await push_compose(app, pilot)
            screen.query_one("#name", Input).value = "half-typed"
            screen.set_focus(None)
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitQuestion) and app.return_code is None
            assert str(app.screen.query_one("#question").render()) == (
                "The certification being composed is not saved or submitted: quitting discards it. Quit?")
            await pilot.press("enter")  # the default stays
            await pilot.pause()
            assert app.screen is screen and screen.query_one("#name", Input).value == "half-typed"
            app.request_quit()
            await pilot.pause()
            assert isinstance(app.screen, QuitQuestion)
            await pilot.press("y")
            await pilot.pause()
            assert app.return_code == 0

    async def test_the_footer_offers_one_key_for_the_keys_wherever_focus_is(self) -> None:
        """Out of a text field (the category list) the footer read both "f1 Keys" and "? Keys" (the app's binding
        beside this screen's F1): "? Keys" alone there, as on every screen; in a field `?` is text, "f1 Keys". Both
        keys open them out of a field."""
        from nvcre_tui.screens.help import HelpScreen

        app = await open_compose()
        async with app.run_test(size=(160, 40)) as pilot:
            screen = await push_compose(app, pilot)
            for focused, said in ((screen.query_one("#name", Input), "f1"), (screen.query_one("#categories", SelectionList), "?")):
                focused.focus()
                await pilot.pause()
                keys = [(key.key_display, key.description) for key in screen.query(FooterKey) if key.description == "Keys"]
                assert keys == [(said, "Keys")], (focused.id, keys)
            for key in ("question_mark", "f1"):
                await pilot.press(key)
                await pilot.pause()
                assert isinstance(app.screen, HelpScreen), key
                app.pop_screen()
                await pilot.pause()

    async def test_quitting_with_an_unchanged_form_does_not_ask(self) -> None:
        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            await push_compose(app, pilot)
            app.request_quit()
            await pilot.pause()
            assert app.return_code == 0

    async def test_a_loaded_or_saved_form_is_on_disk_so_escape_does_not_ask(self, tmp_path: Path) -> None:
        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            base = app.screen
            screen = await push_compose(app, pilot)
            await pilot.press("f3")  # the default certification
            await pilot.pause()
            assert not screen.changed()
            screen.query_one("#name", Input).value = "renamed"
            await pilot.pause()
            assert screen.changed()
            await pilot.press("f2")
            await pilot.pause()
            app.screen.query_one("#path", Input).value = str(tmp_path / "renamed.yaml")
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is screen and not screen.changed()
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is base


class TestCheckedWithoutColour:
    async def test_a_checked_category_reads_differently_in_plain_text(self) -> None:
        app = await open_compose()
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await push_compose(app, pilot)
            await select_category(pilot, screen, ALL_REDUCE)
            selection = screen.query_one("#categories", SelectionList)
            lines = [selection.render_line(y).text for y in range(selection.size.height)]
            plain = {line[4:].split()[0]: line for line in lines if line.startswith("▐")}  # an entry's first line: its box, its key
            assert len(plain) >= 5 and plain[ALL_REDUCE].startswith("▐X▌ ")
            unchecked = [text for key, text in plain.items() if key != ALL_REDUCE]
            assert unchecked and all(text.startswith("▐ ▌ ") for text in unchecked)


class TestReadOnly:
    async def test_submit_load_and_save_are_hidden_and_refused(self) -> None:
        app = await open_compose(read_only=True)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = await push_compose(app, pilot)
            await screen.fill(certification_from_text("x", LOADED, default_catalog()))
            await pilot.pause()
            assert not screen.check().problems  # the form itself is valid
            keys = {active.binding.action for active in screen.active_bindings.values() if active.node is screen}
            assert not keys & {"submit", "load_file", "save_file"}  # read-only writes nothing: no YAML file either
            assert not any(screen.query_one(button).display for button in ("#submit", "#load", "#save"))
            await pilot.press("ctrl+s", "ctrl+o")
            await pilot.pause()
            assert app.screen is screen
            assert not await app.submit(dict(screen.check().body))
            assert await certifications(app) == []


class TestFormData:
    """The Textual-free half: selector <-> target, body layout, what a loaded file keeps."""

    @pytest.mark.parametrize("text", ["a=b,c in (x,y)", "!d,e notin (z),f", "g!=h", ""])
    def test_selector_round_trips_through_the_target(self, text: str) -> None:
        selector, message = parse_form_selector(text)
        assert selector is not None and message is None
        target = target_body(selector, [], {})
        again, _ = parse_form_selector(selector_text(cast(TargetSpec, target)))  # target_body builds a spec.target
        assert again is not None
        matches = [{"a": "b", "c": "x"}, {"d": "1"}, {"e": "y", "f": ""}, {"g": "h"}, {"g": "i"}, {}]
        assert [selector.matches(labels) for labels in matches] == [again.matches(labels) for labels in matches]

    def test_body_puts_global_thresholds_under_spec_options_and_skips_blank_rows(self) -> None:
        from nvcre_tui.compose.form import CategoryDraft, ThresholdDraft

        draft = Draft(name="x", categories=(CategoryDraft(ALL_REDUCE, {"nodesPerJob": "2", "repeatCount": ""}),),
                      thresholds=(ThresholdDraft("algBandwidthGBps", "value > 1"), ThresholdDraft()))
        body = certification_body(draft)
        assert body["spec"]["options"] == {"thresholds": {"algBandwidthGBps": "value > 1"}}
        assert body["spec"]["categories"][0]["options"] == {"nodesPerJob": 2}
        assert body["spec"]["target"] == {}

    def test_options_an_entry_cannot_use_are_offered_only_when_a_file_set_them(self) -> None:
        catalog = default_catalog()
        dcgm, all_reduce = catalog.find("diagnostics", "dcgm-level4"), catalog.find("communication", "nccl-all-reduce")
        assert dcgm is not None and all_reduce is not None
        assert [f.alias for f in fields_for(dcgm)] == ["testScale", "maxConcurrent", "repeatCount", "timeoutPerJob"]
        assert {"nodesPerJob", "minGroupSize", "onFailure"} <= {f.alias for f in fields_for(all_reduce)}
        # a loaded file's nodesPerJob stays on show, where its refusal is said and it can be cleared
        assert "nodesPerJob" in [f.alias for f in fields_for(dcgm, {"nodesPerJob": "2", "minGroupSize": " "})]
        assert "minGroupSize" not in [f.alias for f in fields_for(dcgm, {"nodesPerJob": "2", "minGroupSize": " "})]

    def test_a_threshold_nothing_measures_is_one_problem_saying_what_is_measured(self) -> None:
        from nvcre_tui.compose.form import CategoryDraft
        from nvcre_tui.compose.review import review
        from nvcre_tui.engine.sim.scenario import build_nodes

        draft = Draft(name="x", categories=(CategoryDraft("diagnostics/dcgm-level4"),),
                      thresholds=(ThresholdDraft("busBandwidthGBps", "value >= 1"),))
        result = review(draft, None, build_nodes(default_scenario()), default_catalog())
        assert result.problems == ("compose: spec.options.thresholds.busBandwidthGBps: no selected category measures "
                                   "busBandwidthGBps; they measure diagTestsRun, diagTestsSkipped",)

    def test_loaded_fields_the_form_does_not_edit_are_carried(self) -> None:
        draft, carried = draft_from_certification(certification_from_text("in", LOADED, default_catalog()))
        assert carried.spec == {"gangScheduler": {"schedulerName": "kai-scheduler", "queue": "default-queue", "queueLabelKey": "kai.scheduler/queue"}}
        assert carried.options == {"maxBytes": "8G"}
        assert carried.category_options == {ALL_REDUCE: {"image": "nvcr.io/nvidia/nccl:1"}}
        assert carried.metadata == {"labels": {"team": "infra"}}
        assert draft.node_names == "gpu-node-01, gpu-node-02, gpu-node-09"


def test_snapshot_filled_form(snap_compare: Any) -> None:
    async def fill(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, NvcreApp)
        await pilot.pause()
        await app.push_screen(ComposeScreen())
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ComposeScreen)
        await type_into(pilot, screen.query_one("#name", Input), "rack-12-burn-in")
        await type_into(pilot, screen.query_one("#selector", Input), f"{CLIQUE} in (clique-0,clique-1)")
        await select_category(pilot, screen, ALL_REDUCE)
        screen.query_one(CategoryOptionsPanel).query_one("#opt-testScale", Select).value = "intra-node"
        await pilot.press("ctrl+n")
        await pilot.pause()
        screen.query_one(ThresholdRow).query_one(Select).value = "busBandwidthGBps"
        await type_into(pilot, screen.query_one(ThresholdRow).query_one(Input), "value >= ")
        screen.query_one("#name", Input).focus()
        await pilot.pause()

    assert snap_compare(NvcreApp(scenario=default_scenario(), live=False), terminal_size=(120, 40), run_before=fill)


def test_fields_not_yet_mounted_give_their_initial_values_and_take_no_messages() -> None:
    """A review scheduled before a row or panel was added can run before its fields are composed (seen under load)."""
    row = ThresholdRow(("busBandwidthGBps",), ThresholdDraft("busBandwidthGBps", "value >= 400"))
    assert not row.composed and row.draft() == ThresholdDraft("busBandwidthGBps", "value >= 400")
    row.show_message("a problem")  # nothing to show it on yet
    row.set_metrics(("algBandwidthGBps",))
    assert "algBandwidthGBps" in row._metrics and "busBandwidthGBps" in row._metrics  # the row's own pick stays
    entry = next(iter(default_catalog().entries.values()))
    panel = CategoryOptionsPanel(entry, {"testScale": "intra-node"})
    assert not panel.composed and panel.draft().options == {"testScale": "intra-node"}
    panel.show_messages({"testScale": "bad"})


async def test_a_name_a_certification_holds_is_not_ready_to_submit(finished_intra_node: Path) -> None:
    """F3 fills in burn-in while a burn-in exists: the review says so (found by a console review: it said ready,
    then ctrl+s was refused "already exists")."""
    from .harness import reopen

    app = NvcreApp(session=await reopen(finished_intra_node), live=False)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        screen = await push_compose(app, pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.pause()
        assert screen.query_one("#name", Input).value == "burn-in"
        taken = "a certification named burn-in exists already; choose another name (or delete that one first)"
        status = shown(screen, "#status")
        assert not status.startswith("✓") and f"compose: metadata.name: {taken}" in status, status
        assert shown(screen, "#name-msg") == taken
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ComposeScreen)
        assert str(list(app._notifications)[-1].message) == f"1 problem, first: compose: metadata.name: {taken}"
        await type_into(pilot, screen.query_one("#name", Input), "burn-in-2")
        assert shown(screen, "#status").startswith("✓ ready to submit burn-in-2")


# The harness's diagnosis, under maxConcurrent 8 (its first round's groups are sized for the waves it plans).
DIAGNOSING = DIAGNOSE.replace("minGroupSize: 2,", "minGroupSize: 2, maxConcurrent: 8,")


async def test_a_diagnose_plan_shows_its_first_rounds_group_sizes() -> None:
    """Not "8 groups × 32 nodes per job": the first round's groups as the Workflow records them (its status)."""
    from nvcre_tui.compose.review import review
    from nvcre_tui.engine.planning.render import render_certification
    from nvcre_tui.widgets.compose_text import plan_text

    from nvcre_tui.engine.store.protocol import NODE

    session = await SimSession.open(default_scenario(), None)
    fleet = (await session.store.list(NODE)).items
    cert = certification_from_text("test", DIAGNOSING, default_catalog())
    [rendered] = render_certification(cert, fleet, default_catalog(), "test")
    status = rendered.workflow.status
    assert status is not None and status.orchestration is not None and status.orchestration.groups
    sizes = [len(group.nodes or []) for group in status.orchestration.groups]
    assert min(sizes) < max(sizes) < len(fleet)  # 8 groups of 3 to 7 nodes on the default fleet
    result = review(*draft_from_certification(cert), fleet, default_catalog())
    text = str(plan_text(result))
    assert f"{len(sizes)} first-round groups of {min(sizes)}-{max(sizes)} nodes (diagnose: later rounds split the failed ones)" in text, text
    assert "per job" not in text


async def rack_burn_in(app: NvcreApp, pilot: Pilot[Any]) -> tuple[ComposeScreen, CategoryOptionsPanel]:
    """The compose form named rack-burn-in, on every GPU node, with all-reduce selected: (screen, its options panel)."""
    screen = await push_compose(app, pilot)
    await type_into(pilot, screen.query_one("#name", Input), "rack-burn-in")
    await type_into(pilot, screen.query_one("#selector", Input), "nvidia.com/gpu.present=true")
    await select_category(pilot, screen, ALL_REDUCE)
    return screen, screen.query_one(f"#{panel_id(ALL_REDUCE)}", CategoryOptionsPanel)


async def test_on_failure_diagnose_is_chosen_in_the_form_and_the_plan_says_what_it_does() -> None:
    """onFailure could only come from a loaded file ("kept from the file as written", a review found): it is a field
    of each category now, written into the Certification as a file would say it, and the plan says what it does."""
    app = await open_compose()
    async with app.run_test(size=(140, 45)) as pilot:
        screen, panel = await rack_burn_in(app, pilot)
        on_failure = panel.query_one("#opt-onFailure", Select)
        assert on_failure.value is Select.NULL  # default: report
        with pytest.raises(InvalidSelectValueError):
            on_failure.value = "retry"
        panel.query_one("#opt-testScale", Select).value = "intra-rack"
        on_failure.value = "diagnose"
        await pilot.pause()
        await pilot.pause()
        preview = yaml.safe_load(shown(screen, "#yaml"))
        assert preview["spec"]["categories"] == [{"domain": "communication", "variant": "nccl-all-reduce",
                                                  "options": {"testScale": "intra-rack", "onFailure": "diagnose"}}]
        assert "on failure: diagnose narrows the failed groups down to their nodes" in shown(screen, "#plan")
        assert shown(screen, "#status").startswith("✓ ready to submit rack-burn-in")
        assert not shown(screen, "#carried")
        # A single-node entry (DCGM) has no group to narrow down: the field is not offered, where it could only be refused.
        await select_category(pilot, screen, "diagnostics/dcgm-level4")
        dcgm = screen.query_one(f"#{panel_id('diagnostics/dcgm-level4')}", CategoryOptionsPanel)
        await pilot.pause()
        assert not dcgm.query("#opt-onFailure") and dcgm.query("#opt-maxConcurrent")
        # Nor nodesPerJob and minGroupSize: it runs one node per Job, which reads neither.
        assert not dcgm.query("#opt-nodesPerJob") and not dcgm.query("#opt-minGroupSize")


async def test_on_failure_diagnose_composed_in_the_console_runs_to_per_node_verdicts() -> None:
    """Issue 10's "onFailure: diagnose runs end to end from the console": composed in the form (no file), submitted,
    and the failed clique narrowed down to its slow-GPU node by the same Workflow, without a second certification."""
    from nvcre_tui.engine.store.protocol import WORKFLOW

    app = await open_compose()
    async with app.run_test(size=(140, 45)) as pilot:
        screen, panel = await rack_burn_in(app, pilot)
        panel.query_one("#opt-testScale", Select).value = "intra-rack"
        panel.query_one("#opt-onFailure", Select).value = "diagnose"
        await pilot.press("ctrl+n")
        await pilot.pause()
        row = screen.query_one(ThresholdRow)
        row.query_one(Select).value = "busBandwidthGBps"
        await type_into(pilot, row.query_one(Input), "value >= 300")
        assert shown(screen, "#status").startswith("✓ ready to submit rack-burn-in"), shown(screen, "#status")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, ComposeScreen)
        assert app.session is not None and app.session.engine is not None
        await app.session.engine.run_until_settled()
        [cert] = await certifications(app)
        [wf] = (await app.session.store.list(WORKFLOW, "default")).items
        assert len(await certifications(app)) == 1 and wf["status"]["orchestration"].get("diagnose") is not None
        assert "gpu-node-07" in {f["name"] for f in wf["status"].get("failedNodes") or []}, wf["status"].get("failedNodes")
        assert cert["status"]["summary"]["result"] == "FAILED"
