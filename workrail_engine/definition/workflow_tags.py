"""The tags a workflow is found by, and the summary of them a workflow list shows.

Three kinds, as upstream WorkRail 3.x finds its workflows by tag: the workflow's own ``tags``;
upstream's functional tags for the ids of upstream's bundled workflows (so that a project holding
those workflows finds them as upstream does); and, for a namespaced id upstream does not tag
(``acme.deploy``), its namespace (``acme``) — one tag for a team's workflows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

__all__ = ["FUNCTIONAL_TAGS", "UPSTREAM_BUNDLED_TAGS", "tag_summary", "workflow_tags"]

# Upstream's functional tags, in upstream's order, with our names for them. Our bundled workflows
# carry the one that fits in their own ``tags``.
FUNCTIONAL_TAGS: dict[str, str] = {
    "coding": "Writing and changing code",
    "review_audit": "Reviewing and auditing",
    "investigation": "Investigating problems",
    "design": "Designing and exploring",
    "documentation": "Writing documentation",
    "tickets": "Tickets and planning",
    "learning": "Learning and personal projects",
    "routines": "Reusable routines",
    "authoring": "Authoring workflows",
}

# Which of upstream's bundled workflows carry which functional tags (v3.121.0; the ones it hides
# from listings are left out, as it leaves them out of a search by tag).
UPSTREAM_BUNDLED_TAGS: dict[str, tuple[str, ...]] = {
    "wr.adaptive-ticket-creation": ("tickets",),
    "wr.architecture-scalability-audit": ("review_audit",),
    "wr.bug-investigation": ("investigation",),
    "wr.classify-task": ("routines", "coding"),
    "wr.coding-task": ("coding",),
    "wr.competitive-analysis": ("investigation", "design"),
    "wr.cross-platform-code-conversion": ("coding",),
    "wr.diagnose-environment": ("investigation",),
    "wr.discovery": ("design", "investigation"),
    "wr.document-creation": ("documentation",),
    "wr.documentation-update": ("documentation",),
    "wr.intelligent-test-case-generation": ("tickets", "coding"),
    "wr.mr-review": ("review_audit",),
    "wr.personal-learning-course-design": ("learning",),
    "wr.personal-learning-materials": ("learning",),
    "wr.presentation-creation": ("learning",),
    "wr.production-readiness-audit": ("review_audit",),
    "wr.relocation-us": ("learning",),
    "wr.routine-context-gathering": ("routines",),
    "wr.routine-design-review": ("routines",),
    "wr.routine-execution-simulation": ("routines",),
    "wr.routine-feature-implementation": ("routines", "coding"),
    "wr.routine-final-verification": ("routines",),
    "wr.routine-hypothesis-challenge": ("routines",),
    "wr.routine-ideation": ("routines",),
    "wr.routine-parallel-work-partitioning": ("routines",),
    "wr.routine-philosophy-alignment": ("routines",),
    "wr.routine-plan-analysis": ("routines",),
    "wr.routine-plan-generation": ("routines",),
    "wr.routine-tension-driven-design": ("routines",),
    "wr.scoped-documentation": ("documentation",),
    "wr.shaping": ("design", "tickets"),
    "wr.ui-ux-design": ("design",),
    "wr.workflow-for-workflows": ("authoring",),
    "ticket-grooming": ("tickets",),
}

_EXAMPLES = 3  # workflow ids a summary entry names


def workflow_tags(workflow_id: str, own: Any) -> list[str]:
    """Every tag ``workflow_id`` is found by: its own (``own``: the definition's ``tags``),
    upstream's functional ones for it, or else its namespace; each once, in that order."""
    tags = [tag for tag in own if isinstance(tag, str)] if isinstance(own, list) else []
    tags += UPSTREAM_BUNDLED_TAGS.get(workflow_id, ())
    namespace, dot, _ = workflow_id.partition(".")
    if dot and workflow_id not in UPSTREAM_BUNDLED_TAGS:
        tags.append(namespace)
    return list(dict.fromkeys(tags))


def tag_summary(tagged: Iterable[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """``{id, displayName, count, examples}`` for each tag of the ``(workflow id, tags)`` pairs:
    the functional tags first, in upstream's order, then the others by name."""
    listed = list(tagged)
    counts = Counter(tag for _, tags in listed for tag in tags)
    order = {tag: index for index, tag in enumerate(FUNCTIONAL_TAGS)}
    return [
        {
            "id": tag,
            "displayName": FUNCTIONAL_TAGS.get(tag, tag),
            "count": counts[tag],
            "examples": [wid for wid, tags in listed if tag in tags][:_EXAMPLES],
        }
        for tag in sorted(counts, key=lambda tag: (order.get(tag, len(order)), tag))
    ]
