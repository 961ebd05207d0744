"""A short name for each diagnostic code, as ruff names its rules (``F401`` is
``unused-import``): `workrail validate --statistics` prints it beside the count, and the JSON and
SARIF outputs carry it. docs/diagnostics.md describes each code; a test keeps the two in step.
"""

from __future__ import annotations

__all__ = ["RULE_NAMES", "rule_name"]

RULE_NAMES: dict[str, str] = {
    "WR000": "checker-failure",
    "WR001": "syntax-error",
    "WR002": "duplicate-key",
    "WR003": "unreadable-file",
    "WR004": "file-too-large",
    "WR005": "nesting-too-deep",
    "WR006": "empty-file",
    "WR007": "byte-order-mark",
    "WR008": "yaml-alias-bomb",
    "WR009": "too-many-findings",
    "WR101": "wrong-type",
    "WR102": "unknown-property",
    "WR103": "missing-property",
    "WR104": "value-not-in-enum",
    "WR105": "pattern-mismatch",
    "WR106": "schema-constraint",
    "WR201": "duplicate-step-id",
    "WR202": "unknown-loop-body",
    "WR203": "loop-without-condition",
    "WR204": "nested-loop",
    "WR205": "loop-without-count-or-items",
    "WR206": "steps-and-delegations",
    "WR207": "loop-condition-never-changes",
    "WR301": "unknown-step-reference",
    "WR302": "step-not-run-yet",
    "WR303": "undeclared-parameter",
    "WR304": "undeclared-secret",
    "WR305": "incomplete-reference",
    "WR306": "not-a-reference",
    "WR307": "output-of-skipped-step",
    "WR401": "invalid-regex",
    "WR402": "operator-type-mismatch",
    "WR403": "invalid-json-schema",
    "WR404": "length-min-over-max",
    "WR405": "backtracking-regex",
    "WR406": "schema-ref-outside",
    "WR407": "empty-validation-criteria",
    "WR408": "rule-without-operand",
    "WR409": "quoted-json-in-message",
    "WR410": "condition-never-holds",
    "WR501": "command-without-timeout",
    "WR502": "template-in-shell-script",
    "WR503": "shellcheck",
    "WR504": "shellcheck-skipped",
    "WR601": "id-differs-from-file-name",
    "WR602": "version-not-semver",
    "WR603": "duplicate-workflow-id",
    "WR701": "unknown-function-reference",
    "WR702": "unknown-assessment",
    "WR703": "unknown-routine",
    "WR704": "duplicate-prompt-fragment-id",
    "WR705": "unknown-output-contract",
    "WR706": "duplicate-reference-id",
    "WR707": "duplicate-assessment-id",
    "WR708": "unknown-assessment-level",
    "WR709": "unknown-delegated-workflow",
    "WR710": "delegation-cycle",
    "WR801": "unknown-template",
    "WR802": "missing-template-arg",
    "WR803": "template-arg-not-scalar",
    "WR804": "nested-template-call",
    "WR805": "unknown-feature",
    "WR806": "unknown-ref",
    "WR807": "unknown-binding-slot",
    "WR808": "token-left-after-compile",
    "WR809": "duplicate-compiled-step-id",
    "WR810": "prompt-and-prompt-blocks",
    "WR811": "compiled-too-large",
}


def rule_name(code: str) -> str:
    """The code's name; the code itself for one without (never raised: output must not fail)."""
    return RULE_NAMES.get(code, code)
