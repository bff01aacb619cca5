"""Plain-language notes on a target: why it is there and what its divergences say about the change."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from histeg.impact.targets import Target

CALLABLE_KINDS = ("function", "method")


def notes_on(target: Target, traces_seen: int, outcome_changed: int = 0) -> list[str]:
    """``traces_seen``: the traced entry points that ran the target in either version, whether or not anything
    in them diverged; ``outcome_changed``: those of them whose test's outcome changed."""
    return [*_origin(target), *_classes(target), *_change(target, traces_seen, outcome_changed)]


def _origin(target: Target) -> list[str]:
    found = []
    if target.unmapped:
        found.append("diverged without a syntax change in it or above it in the call chain: probably a consequence of changed state")
    if target.new and target.kind == "class":
        found.append("new class")
    elif target.new:
        found.append(f"new {target.kind}")
    return found


def _classes(target: Target) -> list[str]:
    found = []
    classes = target.classes()
    if classes["exceptionOnlyInNew"]:
        found.append(f"raises where the old version did not ({classes['exceptionOnlyInNew']} divergence(s)): regression candidate")
    if classes["exceptionOnlyInOld"]:
        found.append(f"no longer raises where the old version did ({classes['exceptionOnlyInOld']} divergence(s)): a fix?")
    if classes["outcomeChanged"]:
        found.append("a test's outcome changed with it: the suite sees this change")
    elif target.divergences() and classes["silent"]:
        found.append("its divergences are silent: no existing test's outcome changed")
    return found


def _change(target: Target, traces_seen: int, outcome_changed: int) -> list[str]:
    """What a changed target's divergences, or their absence, suggest about the change."""
    if target.new_tests and not target.divergences() and target.syntax_changes:
        return [
            (
                f"its behaviour is observed only by tests this version adds or renames ({len(target.new_tests)} entry point(s)): "
                "the existing tests cannot tell old from new"
            )
        ]
    if not target.syntax_changes:
        return []
    local, non_local = target.impact.local, target.impact.non_local
    if local:
        only_lines = not non_local and not any(set(d.call.kinds) - {"lines"} for d in local)
        return (
            ["changed; only its own lines differ (same returns, parameters and calls): likely an equivalent change"] if only_lines else []
        )
    if target.kind not in CALLABLE_KINDS:
        return [] if non_local else ["changed; no divergence was attributed to it"]
    return [] if target.new else [_not_local(bool(non_local), traces_seen, outcome_changed)]


def _not_local(non_local: bool, traces_seen: int, outcome_changed: int) -> str:
    if traces_seen == 0:
        return "changed but not executed by any traced entry point"
    if outcome_changed:
        return (
            f"ran under {outcome_changed} test(s) whose outcome changed, with no divergence of its own: "
            "its effect shows through what it returns, writes or calls"
        )
    if non_local:
        return "no local impact observed; the change shows in the functions it calls"
    return "changed but no local impact observed: equivalent or not executed"
