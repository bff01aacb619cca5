"""How much a change may matter, in the spirit of ChangeDistiller's levels.

Fluri & Gall (2006) grade change types from *none* (comments, docs) to
*crucial* (removed functionality, changed parameters, parent classes). We
keep their grades where Python has the same construct and add the ones
ChangeDistiller lacks: a changed constant or class attribute is *high*
(its effect reaches every reader, thesis figure 3.2), decorators are *high*
(they replace what a name is bound to), imports are *medium*.
"""

from __future__ import annotations

from histeg.records.syntax import Significance

_BY_CODE_TYPE: dict[str, dict[str, Significance]] = {
    # code type: {change type: significance}; "*" is any other change type
    "docstring": {"*": "none"},
    "function": {"addition": "low", "removal": "crucial", "rename": "high", "modification": "medium", "*": "low"},
    "class": {"addition": "low", "removal": "crucial", "rename": "high", "modification": "medium", "*": "low"},
    "module": {"addition": "low", "removal": "crucial", "*": "medium"},
    "parameter": {"rename": "medium", "modification": "high", "move": "crucial", "*": "crucial"},
    "baseClass": {"*": "crucial"},
    "returnType": {"*": "medium"},
    "decorator": {"*": "high"},
    "constant": {"addition": "low", "removal": "crucial", "*": "high"},
    "import": {"*": "medium"},
}


def significance(change_type: str, code_type: str, level: str, same_scope: bool = True) -> Significance:
    """``same_scope``: for moves, whether the thing stayed in the same block or definition."""
    if change_type == "move" and code_type not in ("parameter",):
        if code_type in ("function", "class"):
            return "low" if same_scope else "high"
        return "low" if same_scope else "medium"
    table = _BY_CODE_TYPE.get(code_type)
    if table is not None:
        return table.get(change_type, table["*"])
    if level != "function" and change_type == "addition" and code_type == "assignment":
        return "low"  # new object state (ChangeDistiller: ADDITIONAL_OBJECT_STATE)
    if level != "function" and change_type == "removal" and code_type == "assignment":
        return "crucial"  # REMOVED_OBJECT_STATE
    return "medium"  # statement insert/delete/update, condition change: ChangeDistiller's medium
