"""Secrets: matched by the words of a name, written as keyed digests that still compare."""

from __future__ import annotations

import pytest

from histeg.tracing.values import REDACTED, Abstraction

KEY = bytes(range(32))
KEYED = Abstraction(key=KEY)


@pytest.mark.parametrize("name", ["api_token", "auth_token", "token", "password", "db_password", "apiKey", "API_KEY", "x-api-key",
                                  "client_secret", "refresh_token"])
def test_names_of_secrets_match_by_words(name: str) -> None:
    assert KEYED.redacts(name)


@pytest.mark.parametrize("name", ["format_token", "tokens", "tokenize", "Token", "get_token_at_offset", "PasswordField", "secretary",
                                  "key", "passage"])
def test_names_that_merely_contain_a_secret_word_do_not_match(name: str) -> None:
    assert not KEYED.redacts(name)


def test_a_users_own_patterns_keep_working() -> None:
    custom = Abstraction(redact=("pin", "=user"), key=KEY)
    assert custom.redacts("pin") and custom.redacts("card_pin") and custom.redacts("user")
    assert not custom.redacts("spin") and not custom.redacts("username") and not custom.redacts("password")


def test_a_secret_is_a_digest_that_compares_and_never_its_value() -> None:
    first = KEYED.abstract({"password": "hunter2", "user": "ada"})[1]
    again = Abstraction(key=KEY).abstract({"password": "hunter2", "user": "ada"})[1]  # another process, the same key
    changed = KEYED.abstract({"password": "hunter3", "user": "ada"})[1]
    assert first == again and first != changed
    assert first is not None and "hunter2" not in first and first.startswith("{'password': <redacted #")
    other_key = Abstraction(key=bytes(32)).abstract({"password": "hunter2", "user": "ada"})[1]
    assert other_key != first  # without the key, a guess cannot be checked against a trace


def test_attributes_and_url_credentials_are_digests_too() -> None:
    class Account:
        def __init__(self, key: str) -> None:
            self.user = "ada"
            self.api_key = key

    seen = KEYED.abstract(Account("k-123"))[1]
    assert seen is not None and "k-123" not in seen and "api_key=<redacted #" in seen
    assert seen != KEYED.abstract(Account("k-124"))[1]
    url = KEYED.abstract("https://ada:hunter2@example.org/x")[1]
    assert url is not None and "hunter2" not in url and url.startswith("'https://ada:<redacted #") and url.endswith("@example.org/x'")
    assert url != KEYED.abstract("https://ada:hunter3@example.org/x")[1]


def test_without_a_key_every_secret_is_written_alike() -> None:
    assert Abstraction().abstract({"password": "hunter2"})[1] == f"{{'password': {REDACTED}}}"


def test_addresses_are_scrubbed_from_every_text_and_data_stays() -> None:
    message = "assert <Keyword 'SELECT' at 0x7F3D2A1B4C50> == <Keyword 'FROM' at 0x7f3d2a1b4d10>"
    assert KEYED.abstract(message)[1] == repr("assert <Keyword 'SELECT' at 0x\u2026> == <Keyword 'FROM' at 0x\u2026>")
    assert KEYED.abstract(AssertionError(message))[1] == "(" + repr("assert <Keyword 'SELECT' at 0x\u2026> == <Keyword 'FROM' at 0x\u2026>") + ",)"
    assert KEYED.abstract("mask 0x1F at offset 0x10")[1] == repr("mask 0x1F at offset 0x10")
