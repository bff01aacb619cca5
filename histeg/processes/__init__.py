"""Process control: commands run in process groups with time limits, signals as exceptions, scratch folders.

Shared by everything that starts other programs (building environments, tracing, generating tests), so it
lives below all of them rather than inside the test runner.
"""
