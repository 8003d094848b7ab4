"""Steps and their loop (cvfilters.engine.steps): alpha policy or bare, linear-light runs, quoting.

The references are numpy formulas written here: ``invert`` is ``255 - value``; under its
``passthrough`` alpha policy alpha is kept, run bare (as a fused group runs its steps) all
four channels are inverted. ``convolve:kernel=[[1]]`` is the identity.
"""

from __future__ import annotations

import numpy as np
import pytest

from cvfilters.backends import get_backend
from cvfilters.core.context import Context, ImageInfo
from cvfilters.core.transfer import SRGB
from cvfilters.engine.spec import format_spec, parse_spec
from cvfilters.engine.steps import quote, run_steps


def rgba() -> np.ndarray:
    """A 4 x 6 BGRA image of one colour, its left half transparent."""
    image = np.zeros((4, 6, 4), np.uint8)
    image[..., :3] = (200, 100, 30)
    image[..., 3] = 255
    image[:, :3, 3] = 0
    return image


def run(spec: str, image: np.ndarray, **kwargs: object) -> tuple[np.ndarray, ImageInfo]:
    ctx = Context(get_backend("cpu"), ImageInfo.of(image))
    out, info = run_steps(ctx, image.copy(), parse_spec(spec), **kwargs)  # type: ignore[arg-type]
    return np.asarray(out), info


@pytest.mark.parametrize("linear", [False, True])
def test_steps_run_under_their_alpha_policy_by_default(linear: bool) -> None:
    image = rgba()
    out, info = run("invert", image, **({"transfer": SRGB} if linear else {}))
    expected = image.copy()
    expected[..., :3] = 255 - image[..., :3]  # alpha kept, transparent pixels' colour too
    np.testing.assert_array_equal(out, expected)
    assert info == ImageInfo(4, 6, 4, np.dtype(np.uint8))


def test_bare_steps_run_the_filter_on_all_four_channels() -> None:
    image = rgba()
    out, info = run("invert | invert | invert", image, bare=True)
    np.testing.assert_array_equal(out, 255 - image)
    assert info == ImageInfo(4, 6, 4, np.dtype(np.uint8))


def test_bare_steps_in_linear_light_run_bare_in_both_kinds_of_group() -> None:
    """A linear step (identity, decoded and encoded: within 1) then a colour step, both bare.

    Under the policies the identity would zero the transparent pixels' colour (premultiplied)
    and invert would keep alpha; run as one linear group, invert would invert linear values.
    """
    image = rgba()
    out, _ = run("convolve:kernel=[[1]] | invert", image, bare=True, transfer=SRGB)
    assert np.abs(out.astype(int) - (255 - image.astype(int))).max() <= 1


@pytest.mark.parametrize(("text", "quoted"), [
    ("plain", "plain"), ("Xmas.png", "Xmas.png"), ("", ""),
    ("a,b", "'a,b'"), ("a|b", "'a|b'"), ("rect:0,0,1,1", "'rect:0,0,1,1'"),
    ("it's", '"it\'s"'), ('say "hi"', '\'say "hi"\''),
    ("[1,2]", "[1,2]"), ("[[0,1],[1,0]]", "[[0,1],[1,0]]"),  # lists hold commas between brackets
])
def test_values_are_quoted_only_where_they_hold_spec_punctuation(text: str, quoted: str) -> None:
    assert quote(text) == quoted


def test_steps_are_written_back_with_lists_bare_and_text_quoted() -> None:
    spec = "convolve:kernel=[[0,1,0]] | masked:mask='rect:0,0,1,1',filter=invert | gaussian_blur:sigma=2,border=wrap"
    assert format_spec(parse_spec(spec)) == \
        "convolve:kernel=[[0,1,0]] | masked:mask='rect:0,0,1,1',filter=invert | gaussian_blur:border=wrap"
