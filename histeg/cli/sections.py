"""``--help`` of the step commands in sections (which versions, where, build, tracing, …), as the option table heads them."""

from __future__ import annotations

import click

from histeg.settings.flags import param_headings
from histeg.settings.table import HEADINGS

OTHER = "Other options"


class SectionedCommand(click.Command):
    """A command whose options are listed under the table's headings, in the table's order within each."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        headings = param_headings()
        sections: dict[str, list[tuple[str, str]]] = {heading: [] for heading in (*HEADINGS, OTHER)}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                sections[headings.get(param.name or "", OTHER)].append(record)
        for heading, records in sections.items():
            if records:
                with formatter.section(heading):
                    formatter.write_dl(records)
