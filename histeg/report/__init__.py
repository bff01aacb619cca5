"""What histeg tells people: terminal output and summaries."""
