"""One file pair → its classified changes: parse, match, edit script, classify."""

from __future__ import annotations

from dataclasses import dataclass

from histeg.syntax.changes import ChangeType, FileStatus, FileSyntaxChanges, SyntaxChange
from histeg.syntax.classify import FileContext, classify, whole_module
from histeg.syntax.edit_script import EditScript, generate
from histeg.syntax.entities import module_entity
from histeg.syntax.matcher import match
from histeg.syntax.options import SyntaxOptions
from histeg.syntax.parse import ParsedFile, SourceTooLarge, parse_source
from histeg.syntax.tree import Tree


@dataclass
class FileDiff:
    """The result for one file, with the trees kept for version-level pairing."""

    result: FileSyntaxChanges
    old: Tree | None = None
    new: Tree | None = None
    script: EditScript | None = None


def diff_sources(old: bytes | None, new: bytes | None, context: FileContext, options: SyntaxOptions | None = None) -> FileDiff:
    """Compare two versions of a file; ``None`` for a side that does not exist."""
    options = options or SyntaxOptions()
    status: FileStatus
    if old is None:
        status = "added"
    elif new is None:
        status = "removed"
    else:
        status = "renamed" if context.old_path != context.new_path else "modified"
    result = FileSyntaxChanges(status, context.old_path, context.new_path, context.old_module, context.new_module)
    try:
        old_parsed = _parse(old, context.old_path, options)
        new_parsed = _parse(new, context.new_path, options)
    except SourceTooLarge as exc:
        result.too_large = True
        result.message = str(exc)
        result.changes = [_too_large_change(context, status)]
        result.number()
        return result_only(result)
    for parsed in (old_parsed, new_parsed):
        if parsed is not None:
            result.parse_errors |= parsed.parse_errors
            result.decode_errors |= parsed.decode_errors
    old_tree = old_parsed.tree if old_parsed else None
    new_tree = new_parsed.tree if new_parsed else None
    script = None
    if old_tree is None and new_tree is not None:
        result.changes = whole_module(new_tree, context, added=True)
    elif new_tree is None and old_tree is not None:
        result.changes = whole_module(old_tree, context, added=False)
    elif old_tree is not None and new_tree is not None:
        script = generate(match(old_tree, new_tree, options.matcher))
        result.edit_script_length = len(script)
        result.changes = classify(old_tree, new_tree, script, context, options.renames)
    result.number()
    return FileDiff(result, old_tree, new_tree, script)


def result_only(result: FileSyntaxChanges) -> FileDiff:
    return FileDiff(result)


def _parse(data: bytes | None, path: str | None, options: SyntaxOptions) -> ParsedFile | None:
    if data is None:
        return None
    return parse_source(data, path or "<source>", options.max_bytes)


def _too_large_change(context: FileContext, status: FileStatus) -> SyntaxChange:
    kinds: dict[FileStatus, ChangeType] = {"added": "addition", "removed": "removal"}
    kind = kinds.get(status, "modification")
    module = context.new_module or context.old_module or ""
    return SyntaxChange(
        level="module",
        entity=module_entity(module),
        function=None,
        klass=None,
        type=kind,
        code_type="module",
        significance="medium" if kind == "modification" else ("low" if kind == "addition" else "crucial"),
        before=None,
        after=None,
        old_lines=None,
        new_lines=None,
        old_path=context.old_path,
        new_path=context.new_path,
        old_entity=module_entity(context.old_module) if context.old_module is not None else None,
    )
