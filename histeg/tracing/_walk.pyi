"""The structural walk of values in C; ``values.Abstraction._walk`` is its reference."""

from typing import Any

INTERFACE: int

class Walker:
    def __init__(self, tables: tuple[Any, ...]) -> None: ...
    def text(self, value: Any, cls: type, budget: list[int], depth: int) -> str | None: ...
    @property
    def remembered(self) -> int:
        """How many containers' texts the memo keeps (texts of unchanged containers, found again by their nodes)."""

def inline_namespace(obj: object, /) -> dict[str, Any] | None:
    """Its attributes as its ``__dict__`` would show them, without making it; None when it has a dict or none inline."""
