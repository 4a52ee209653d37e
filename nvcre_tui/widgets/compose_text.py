"""The compose screen's read-only panes as Textual Content: the plan and the status line."""

from __future__ import annotations

from textual.content import Content

from nvcre_tui.compose.review import CategoryPlan, Review
from nvcre_tui.widgets.fitted_list import wrapped

EXCLUDED_SHOWN = 4
PROBLEM_INDENT = "    "  # a problem's wrapped lines, under its first word
ON_FAILURE_DIAGNOSE = "  on failure: diagnose narrows the failed groups down to their nodes (no second certification)"


def plan_text(review: Review) -> Content:
    """The plan pane: per category, its groups on today's nodes, exclusions, or why it cannot run. Where this user may
    not list Nodes, that is said once, first, and each category shows only what was checked without them."""
    lines: list[Content] = [Content.styled(review.nodes_unknown, "$text-warning")] if review.nodes_unknown else []
    if not review.body["spec"]["categories"]:
        lines.append(Content.styled("Select a category to see what would run.", "$text-muted"))
    elif not review.plan:
        lines.append(Content.styled("The plan appears once the fields have no errors.", "$text-muted"))
    for item in review.plan:
        lines.append(Content.assemble((item.key, "bold"), ("  " + item.test_scale, "$text-muted")))
        lines.extend(_plan_lines(item))
    return Content("\n").join(lines)


def _plan_lines(item: CategoryPlan) -> list[Content]:
    if item.error:
        return [Content.styled(f"  ✗ cannot run: {item.error}", "$text-error")]
    on_failure = [Content(ON_FAILURE_DIAGNOSE)] if item.diagnose_on_failure else []
    if item.unplanned:  # why is said once, above
        return on_failure
    sizes = f"{item.smallest}" if item.smallest == item.largest else f"{item.smallest}-{item.largest}"
    nodes = f"{sizes} node{'s' if sizes != '1' else ''}"
    groups = f"{item.groups} {'first-round ' if item.diagnose else ''}group{'s' if item.groups != 1 else ''}"
    if item.diagnose:  # its later rounds split the groups that fail: the first round is what is known now
        planned = f"{groups} of {nodes} (diagnose: later rounds split the failed ones)"
    elif item.smallest == item.largest:
        planned = f"{groups} × {nodes} per job"
    else:
        planned = f"{groups} of {nodes}"
    lines = [Content(f"  {planned} · {item.eligible} eligible nodes"), *on_failure]
    if item.excluded:
        shown = "; ".join(f"{name} {reason}" for name, reason in item.excluded[:EXCLUDED_SHOWN])
        more = f"; … {len(item.excluded) - EXCLUDED_SHOWN} more" if len(item.excluded) > EXCLUDED_SHOWN else ""
        lines.append(Content.styled(f"  excluded {len(item.excluded)}: {shown}{more}", "$text-warning"))
    return lines


def status_text(review: Review, width: int = 0) -> Content:
    """Every problem as the CLI prints it, or that the form is ready. `width` (0: not laid out yet, one line each): a
    problem wraps under its own first word (column 4), not at the pane's edge, where on 80 columns its second line read
    as a problem of its own."""
    if not review.problems:
        return Content.styled(f"✓ ready to submit {review.body['metadata']['name']} (ctrl+s)", "$text-success")
    count = len(review.problems)
    header = Content.styled(f"✗ {count} problem{'s' if count != 1 else ''}; submit is refused until fixed:", "bold $text-error")
    lines = [line for problem in review.problems
             for line in (wrapped(f"  {problem}", width, indent=PROBLEM_INDENT) if width > 2 * len(PROBLEM_INDENT) else [f"  {problem}"])]
    return Content("\n").join([header, *(Content(line) for line in lines)])
