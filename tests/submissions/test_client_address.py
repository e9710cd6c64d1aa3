"""Whose quota an upload counts against when the app sits behind a proxy: the address the
trusted proxy appended to X-Forwarded-For, never an entry the client wrote itself."""

from __future__ import annotations

import pytest

from evaluator.core.errors import FactBoardError
from evaluator.submissions import quotas


def test_rotating_x_forwarded_for_does_not_change_the_key_behind_a_space_proxy() -> None:
    """A client that sent its own X-Forwarded-For (a new value on each upload) was a new
    submitter each time: 6 of 6 files went through a limit of 2. The Space's proxy appends the
    address it saw, so the last entry is the client's real address."""
    proxies = quotas.trusted_proxies({"SPACE_ID": "org/board"})
    assert proxies == 1
    keys = {
        quotas.submitter_key(
            None, quotas.client_address(f"10.0.0.{i}, 203.0.113.7", "10.16.0.1", proxies)
        )
        for i in range(6)
    }
    assert len(keys) == 1
    assert quotas.client_address("203.0.113.7", "10.16.0.1", proxies) == "203.0.113.7"


def test_without_a_trusted_proxy_the_header_is_ignored() -> None:
    assert quotas.trusted_proxies({}) == 0
    assert quotas.client_address("1.2.3.4", "198.51.100.2", 0) == "198.51.100.2"
    assert quotas.client_address(None, "198.51.100.2", 1) == "198.51.100.2"
    assert quotas.client_address(None, None, 0) is None


def test_two_proxies_and_a_short_header() -> None:
    assert quotas.client_address("spoof, 203.0.113.7, 10.1.1.1", "p", 2) == "203.0.113.7"
    assert quotas.client_address("203.0.113.7", "p", 2) == "203.0.113.7"


def test_the_setting_must_be_a_whole_number() -> None:
    assert quotas.trusted_proxies({"FACTBOARD_TRUSTED_PROXIES": "2", "SPACE_ID": "x"}) == 2
    assert quotas.trusted_proxies({"FACTBOARD_TRUSTED_PROXIES": "0", "SPACE_ID": "x"}) == 0
    with pytest.raises(FactBoardError, match="FACTBOARD_TRUSTED_PROXIES='two'"):
        quotas.trusted_proxies({"FACTBOARD_TRUSTED_PROXIES": "two"})
