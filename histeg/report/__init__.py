"""What histeg tells people about its outputs: the run report (HTML, Markdown, table), the gate, trace text."""
