"""Process defaults and the channel order of the run in progress."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cvfilters.core.defaults import active_channel_order, get_defaults, running_in, set_defaults


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
