"""Process defaults and the channel order of the run in progress."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvfilters.core.defaults import (
    active_channel_order,
    get_defaults,
    resolve_channel_order,
    running_in,
    set_defaults,
)


@pytest.fixture
def restored() -> Iterator[None]:
    before = get_defaults()
    yield
    set_defaults(channel_order=str(before["channel_order"]), linear=bool(before["linear"]))  # type: ignore[arg-type]


@pytest.mark.usefixtures("restored")
def test_outside_a_run_the_order_is_the_process_default() -> None:
    set_defaults(channel_order="bgr")
    assert active_channel_order() == "bgr"
    set_defaults(channel_order="rgb")
    assert active_channel_order() == "rgb"
    with running_in("bgr"):
        assert active_channel_order() == "bgr"
        with running_in("rgb"):
            assert active_channel_order() == "rgb"
        assert active_channel_order() == "bgr"
    assert active_channel_order() == "rgb"


@pytest.mark.usefixtures("restored")
def test_an_unknown_order_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^channel_order='RGB' is not one of bgr, rgb$"):
        set_defaults(channel_order="RGB")  # type: ignore[arg-type]
    assert get_defaults()["channel_order"] in ("bgr", "rgb")


@pytest.mark.usefixtures("restored")
def test_linear_is_set_under_its_own_name_and_non_bools_are_refused() -> None:
    """Catches the linear default stored under another key or as None, and a refusal without its message."""
    for linear in (True, False, True):
        set_defaults(linear=linear)
        assert get_defaults() == {"channel_order": get_defaults()["channel_order"], "linear": linear}
    with pytest.raises(ValueError, match=r"^linear=1 must be True or False$"):
        set_defaults(linear=1)  # type: ignore[arg-type]
    assert get_defaults()["linear"] is True


@pytest.mark.usefixtures("restored")
def test_a_call_s_own_order_wins_over_the_process_default() -> None:
    """Catches a call's order ignored for the default (or the default for the call's), and an unchecked order."""
    for default, other in (("rgb", "bgr"), ("bgr", "rgb")):
        set_defaults(channel_order=default)  # type: ignore[arg-type]
        assert resolve_channel_order(None) == default
        assert resolve_channel_order(other) == other
        assert resolve_channel_order(default) == default
    with pytest.raises(ValueError, match=r"^channel_order='RGB' is not one of bgr, rgb$"):
        resolve_channel_order("RGB")
