"""Reading histogram files (cvfilters.filters._shared.histogram_files.load_histogram): what it takes,
what it refuses, and the one-line messages, written out here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from skimage.exposure import match_histograms

import cvfilters as cvf
from cvfilters.core.arrays import ImageValue
from cvfilters.filters._shared.histogram_files import (
    _file_key,
    _reference_counts_cached,
    load_histogram,
    save_histogram,
)


def _json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def _refused(path: Path) -> str:
    with pytest.raises(ValueError) as caught:
        load_histogram(path)
    return str(caught.value)


def test_json_and_npy_counts_are_read_as_float64_rows(tmp_path: Path) -> None:
    one = load_histogram(_json(tmp_path / "h.json", {"counts": [1, 0, 3]}))  # no "format": taken as ours
    np.testing.assert_array_equal(one, [[1.0, 0.0, 3.0]])
    assert one.dtype == np.float64
    three = np.arange(6, dtype=np.int64).reshape(3, 2) + 1
    np.save(tmp_path / "h.npy", three)
    np.testing.assert_array_equal(load_histogram(tmp_path / "h.npy"), three)
    bom = tmp_path / "bom.JSON"  # a byte-order mark and an upper-case suffix
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"format": "cvfilters.histogram", "counts": [[2, 2]]}).encode())
    np.testing.assert_array_equal(load_histogram(bom), [[2.0, 2.0]])


def test_levels_from_2_to_65536_and_one_or_three_channels(tmp_path: Path) -> None:
    for levels in (2, 65536):
        np.save(tmp_path / "ok.npy", np.ones((3, levels), np.int64))
        assert load_histogram(tmp_path / "ok.npy").shape == (3, levels)
    for shape in [(1,), (65537,), (2, 4), (3, 1)]:
        np.save(tmp_path / "bad.npy", np.ones(shape, np.int64))
        expected = (f"{tmp_path / 'bad.npy'}: not a histogram file (shape {(1, *shape) if len(shape) == 1 else shape} "
                    "is not (K,), (1, K) or (3, K) with 2 <= K <= 65536)")
        assert _refused(tmp_path / "bad.npy") == expected
    np.save(tmp_path / "big.npy", np.ones(3 * 65536 + 1, np.int64))  # refused by its header, before reading
    assert _refused(tmp_path / "big.npy") == (f"{tmp_path / 'big.npy'}: holds 196609 = 196609 values, more than "
                                              "196608")


def test_counts_must_be_finite_non_negative_with_every_channel_counted(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npy"
    for counts in ([[1.0, -1.0, 1.0]], [[1.0, np.inf]], [[1.0, np.nan]]):
        np.save(bad, np.array(counts))
        assert _refused(bad) == f"{bad}: not a histogram file (counts must be finite numbers >= 0)"
    np.save(bad, np.array([[True, False]]))
    assert _refused(bad) == f"{bad}: not a histogram file (counts must be finite numbers >= 0)"
    np.save(bad, np.array([[1, 2], [0, 0], [3, 4]]))  # one channel counts nothing, the others do
    assert _refused(bad) == f"{bad}: not a histogram file (every channel needs a positive count)"
    np.save(bad, np.array([[0.0, 0.5]]))  # a fraction of a count is a count
    np.testing.assert_array_equal(load_histogram(bad), [[0.0, 0.5]])


def test_json_structure_and_suffix_are_checked_with_their_message(tmp_path: Path) -> None:
    listed = _json(tmp_path / "l.json", [[1, 2]])
    assert _refused(listed) == (f'{listed}: not a histogram file (a JSON histogram is an object with a "counts" '
                                'list (see save_histogram))')
    uncounted = _json(tmp_path / "u.json", {"format": "cvfilters.histogram", "levels": 2})
    assert _refused(uncounted) == _refused(listed).replace(str(listed), str(uncounted))
    for values in (["1", "2"], [True, False]):  # numbers only, as the message says
        words = _json(tmp_path / "w.json", {"counts": values})
        assert _refused(words) == f"{words}: not a histogram file (counts must be finite numbers >= 0)"
    other = _json(tmp_path / "o.json", {"format": "something.else", "counts": [1, 2]})
    assert _refused(other) == f"{other}: not a histogram file (\"format\" must be 'cvfilters.histogram')"
    text = tmp_path / "h.txt"
    text.write_text("1 2 3")
    assert _refused(text) == f"{text}: not a histogram file (a histogram file ends in .npy or .json)"
    assert _refused(tmp_path / "missing.json").startswith(f"{tmp_path / 'missing.json'}: ")


# Writing (save_histogram): the counts are numpy's bincount of the image's levels, written out here.
RNG = np.random.default_rng(3)
BGRA = RNG.integers(0, 256, (7, 9, 4), dtype=np.uint8)


def _bincount(plane: np.ndarray) -> np.ndarray:
    return np.bincount(plane.ravel(), minlength=256)


def test_saving_a_colour_image_counts_b_g_r_by_default_and_ignores_alpha(tmp_path: Path) -> None:
    counts = save_histogram(tmp_path / "h.json", BGRA)  # no space given: per channel
    np.testing.assert_array_equal(counts, [_bincount(BGRA[..., c]) for c in range(3)])
    data = json.loads((tmp_path / "h.json").read_text())
    assert data == {"format": "cvfilters.histogram", "version": 1, "levels": 256, "space": "per_channel",
                    "channels": ["b", "g", "r"], "counts": counts.tolist()}
    assert save_histogram(tmp_path / "h.npy", BGRA).shape == (3, 256)
    np.testing.assert_array_equal(np.load(tmp_path / "h.npy"), counts)


def test_saving_a_grey_image_with_or_without_alpha_counts_the_grey_plane(tmp_path: Path) -> None:
    grey = BGRA[..., 1]
    for image in (grey, np.dstack([grey, BGRA[..., 3]])):  # H x W, and grey + alpha
        counts = save_histogram(tmp_path / "g.json", image)
        np.testing.assert_array_equal(counts, [_bincount(grey)])
        data = json.loads((tmp_path / "g.json").read_text())
        assert (data["channels"], data["space"]) == (["gray"], "per_channel")


def test_saving_refuses_an_unknown_space_and_suffix_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as caught:
        save_histogram(tmp_path / "h.npy", BGRA, space="xyz")
    assert str(caught.value) == "save_histogram: space='xyz' is not one of ycrcb, lab, hsv, per_channel"
    with pytest.raises(ValueError) as caught:
        save_histogram(tmp_path / "h.txt", BGRA)
    assert str(caught.value) == f"save_histogram: {tmp_path / 'h.txt'} must end in .npy or .json"
    assert list(tmp_path.iterdir()) == []


# References of match_histogram of another channel count than the image (histogram_files._reference_counts_cached).
# Oracle: scikit-image's match_histograms (float64, unrounded) on the plane the docstring names; our table
# rounds, so at most 0.5 level apart. The BT.601 luma is written out here with the colours chosen away from
# a half level, so that any rounding of 0.299 R + 0.587 G + 0.114 B gives the same level.
ROUNDING = 0.5 + 1e-9
IMAGE = RNG.integers(40, 200, (12, 16, 3), dtype=np.uint8)  # narrower levels than the references


def _colour_reference() -> tuple[np.ndarray, np.ndarray]:
    """A BGR reference with independent channels, and its BT.601 luma."""
    ref = np.random.default_rng(5).integers(0, 255, (10, 14, 3)).astype(np.float64)
    near_half = np.abs((ref @ [0.114, 0.587, 0.299]) % 1 - 0.5) < 0.05
    ref[near_half, 0] += 1  # B + 1 moves the luma 0.114 away from the half level
    luma = ref @ [0.114, 0.587, 0.299]
    assert (np.abs(luma % 1 - 0.5) >= 0.05).all()
    return ref.astype(np.uint8), np.rint(luma).astype(np.uint8)


def _matched_within_rounding(out: np.ndarray, image: np.ndarray, reference: np.ndarray) -> None:
    difference = np.abs(out.astype(np.float64) - match_histograms(image, reference))
    assert difference.max() <= ROUNDING, difference.max()


def test_a_colour_reference_serves_a_grey_image_by_its_luma_without_alpha() -> None:
    ref, luma = _colour_reference()
    grey = IMAGE[..., 1]
    for reference in (ref, np.dstack([ref, 255 - ref[..., 1]])):  # BGR, BGRA
        _matched_within_rounding(cvf.apply(grey, "match_histogram", reference=reference), grey, luma)
    assert np.abs(match_histograms(grey, ref[..., 0]) - match_histograms(grey, luma)).max() > 10  # B is not the luma


def test_a_grey_reference_serves_every_channel_of_a_colour_image() -> None:
    ramp = np.tile(np.arange(0, 250, 10, dtype=np.uint8), (6, 1))  # dark on the left: any 3 columns differ
    for reference in (ramp, ramp[..., None]):  # H x W and H x W x 1
        out = cvf.apply(IMAGE, "match_histogram", reference=reference)
        for c in range(3):
            _matched_within_rounding(out[..., c], IMAGE[..., c], ramp)
    grey = IMAGE[..., 2]
    _matched_within_rounding(cvf.apply(grey, "match_histogram", reference=ramp[..., None]), grey, ramp)


def test_a_bgra_reference_is_matched_per_channel_without_its_alpha() -> None:
    ref, _ = _colour_reference()
    bgra = np.dstack([ref, np.full(ref.shape[:2], 7, np.uint8)])  # an alpha unlike every channel
    out = cvf.apply(IMAGE, "match_histogram", reference=bgra)
    for c in range(3):
        _matched_within_rounding(out[..., c], IMAGE[..., c], ref[..., c])


def test_a_grey_and_alpha_reference_is_its_grey_plane() -> None:
    """A PIL "LA" image (and an H x W x 2 array) is grey + alpha, as save_histogram reads it: the alpha is ignored."""
    from PIL import Image

    grey, alpha = np.tile(np.arange(0, 250, 10, dtype=np.uint8), (6, 1)), np.full((6, 25), 3, np.uint8)
    for reference in (Image.fromarray(np.dstack([grey, alpha]), "LA"), np.dstack([grey, alpha])):
        _matched_within_rounding(cvf.apply(IMAGE[..., 0], "match_histogram", reference=reference), IMAGE[..., 0], grey)
        out = cvf.apply(IMAGE, "match_histogram", reference=reference)  # was refused: "holds 2 channels"
        for c in range(3):
            _matched_within_rounding(out[..., c], IMAGE[..., c], grey)


def test_the_cached_reference_counts_cannot_be_changed_by_a_caller() -> None:
    """The counts are cached per reference: a caller's write would change every later match_histogram."""
    counts = _reference_counts_cached(_file_key(ImageValue(IMAGE)), 3, "per_channel")
    np.testing.assert_array_equal(counts, [np.bincount(IMAGE[..., c].ravel(), minlength=256) for c in range(3)])
    with pytest.raises(ValueError, match="read-only"):
        counts[0, 0] = 1
