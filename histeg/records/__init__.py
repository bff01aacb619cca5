"""Typed records of every JSON file histeg writes (see ``base``); the schemas are generated from them."""
