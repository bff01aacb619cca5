"""Reading a project's history: commits, revisions, snapshots, file-level changes."""
