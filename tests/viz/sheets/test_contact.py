"""Contact sheets against a geometry worked out by hand and labels drawn with cv2 directly.

Tiles of 10 x 20 pixels (height x width) in cells of 24 x 32 (the tile, an 18-pixel label
below it and a 4-pixel gap); the sheet has a 4-pixel margin all round.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cvfilters.viz.sheets.contact import contact_sheet, label_strip


def drawn(text: str, width: int, height: int, scale: float, color: tuple[int, int, int] = (0, 0, 0)) -> np.ndarray:
    """The strip written out: white, ``text`` at ``scale`` centred as OpenCV measures it."""
    strip = np.full((height, width, 3), 255, np.uint8)
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    origin = (max(2, (width - w) // 2), (height + h) // 2)
    cv2.putText(strip, text, origin, cv2.FONT_HERSHEY_SIMPLEX, scale, color, 1, cv2.LINE_AA)
    return strip


@pytest.mark.parametrize(("height", "scale"), [(18, 0.45), (36, 0.9), (9, 0.225)])
def test_a_label_that_fits_is_drawn_at_the_scale_of_its_height(height: int, scale: float) -> None:
    strip = label_strip("Ab", 200, (10, 20, 30), height)
    assert strip.shape == (height, 200, 3) and strip.dtype == np.uint8
    np.testing.assert_array_equal(strip, drawn("Ab", 200, height, scale, (10, 20, 30)))
    assert (strip != 255).any()


def test_the_default_label_is_black_and_18_pixels_high() -> None:
    np.testing.assert_array_equal(label_strip("gauss", 80), drawn("gauss", 80, 18, 0.45))


def test_a_long_label_shrinks_in_steps_of_0_05_down_to_0_3() -> None:
    text = "sigma=1.5 kernel"
    widths = {s: cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, s, 1)[0][0] for s in (0.45, 0.4, 0.35, 0.3)}
    # a width that 0.35 fits (less 4 pixels of margin) and 0.4 does not
    width = widths[0.35] + 4
    assert widths[0.4] > width - 4
    np.testing.assert_array_equal(label_strip(text, width), drawn(text, width, 18, 0.35))
    # a width that 0.45 fills to the pixel, inside the 4-pixel margin only at 0.4
    full = widths[0.45]
    assert widths[0.4] <= full - 4
    np.testing.assert_array_equal(label_strip(text, full), drawn(text, full, 18, 0.4))
    # a width even 0.3 overflows: 0.3 is the limit, the text starts 2 pixels in
    narrow = widths[0.3] - 10
    np.testing.assert_array_equal(label_strip(text, narrow), drawn(text, narrow, 18, 0.3))


def test_an_empty_label_is_a_white_strip() -> None:
    np.testing.assert_array_equal(label_strip("", 30), np.full((18, 30, 3), 255, np.uint8))


def tiles(count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (10, 20, 3), dtype=np.uint8) for _ in range(count)]


def expected_sheet(images: list[np.ndarray], labels: list[str], columns: int, colors: list[tuple[int, int, int]],
                   title: str | None, height: int, width: int) -> np.ndarray:
    sheet = np.full((height, width, 3), 255, np.uint8)
    top = 22 if title else 0
    if title:
        sheet[4:22, 4:width - 4] = drawn(title, width - 8, 18, 0.45)
    for i, (image, text) in enumerate(zip(images, labels, strict=True)):
        y, x = top + 4 + 32 * (i // columns), 4 + 24 * (i % columns)
        sheet[y:y + 10, x:x + 20] = image
        # "abcde" at 0.45 overflows 20 - 4 pixels: 0.3 is the limit
        sheet[y + 10:y + 28, x:x + 20] = drawn(text, 20, 18, 0.45 if len(text) < 2 else 0.3, colors[i])
    return sheet


def test_five_tiles_in_three_columns() -> None:
    images = tiles(5)
    labels = ["a", "b", "c", "d", "e"]
    sheet = contact_sheet(images, labels, 3)
    # 2 rows of 32 + 4; 3 columns of 24 + 4
    assert sheet.shape == (68, 76, 3) and sheet.dtype == np.uint8
    np.testing.assert_array_equal(sheet, expected_sheet(images, labels, 3, [(0, 0, 0)] * 5, None, 68, 76))
    np.testing.assert_array_equal(sheet[36:46, 28:48], images[4])  # row 1, column 1
    assert (sheet[36:68, 52:76] == 255).all()  # the sixth cell is empty


def test_a_title_goes_across_the_top_and_moves_the_grid_down() -> None:
    images = tiles(4, 1)
    labels = ["w", "x", "y", "z"]
    colors = [(0, 0, 255), (0, 255, 0), (255, 0, 0), (40, 50, 60)]
    sheet = contact_sheet(images, labels, 2, title="Title", colors=colors)
    # 18 + 4 for the title, 2 rows of 32 + 4; 2 columns of 24 + 4
    assert sheet.shape == (90, 52, 3)
    np.testing.assert_array_equal(sheet, expected_sheet(images, labels, 2, colors, "Title", 90, 52))
    np.testing.assert_array_equal(sheet[26:36, 4:24], images[0])
    np.testing.assert_array_equal(sheet[58:68, 28:48], images[3])


def test_an_empty_title_is_no_title() -> None:
    images = tiles(2, 2)
    np.testing.assert_array_equal(contact_sheet(images, ["p", "q"], 2, title=""),
                                  contact_sheet(images, ["p", "q"], 2))


@pytest.mark.parametrize(("columns", "used", "shape"), [(0, 1, (3 * 32 + 4, 28, 3)), (-2, 1, (3 * 32 + 4, 28, 3)),
                                                         (1, 1, (3 * 32 + 4, 28, 3)), (3, 3, (36, 76, 3)),
                                                         (9, 3, (36, 76, 3))])
def test_columns_are_kept_between_one_and_the_number_of_tiles(columns: int, used: int,
                                                              shape: tuple[int, int, int]) -> None:
    images = tiles(3, 3)
    sheet = contact_sheet(images, ["a", "b", "c"], columns)
    assert sheet.shape == shape
    np.testing.assert_array_equal(sheet, expected_sheet(images, ["a", "b", "c"], used, [(0, 0, 0)] * 3, None,
                                                        *shape[:2]))


def test_one_tile_makes_a_one_cell_sheet() -> None:
    (image,) = tiles(1, 5)
    sheet = contact_sheet([image], ["a"], 4)
    assert sheet.shape == (36, 28, 3)
    np.testing.assert_array_equal(sheet, expected_sheet([image], ["a"], 1, [(0, 0, 0)], None, 36, 28))


def test_tiles_that_are_not_square_keep_their_orientation() -> None:
    rng = np.random.default_rng(4)
    image = rng.integers(0, 256, (30, 6, 3), dtype=np.uint8)
    sheet = contact_sheet([image, image[::-1]], ["", ""], 2)
    # cells of 6 + 4 wide, 30 + 18 + 4 high
    assert sheet.shape == (56, 24, 3)
    np.testing.assert_array_equal(sheet[4:34, 4:10], image)
    np.testing.assert_array_equal(sheet[4:34, 14:20], image[::-1])
    sheet[4:34, 4:10] = sheet[4:34, 14:20] = 255
    assert (sheet == 255).all()


@pytest.mark.parametrize(("count", "labels"), [(0, []), (2, ["a"]), (1, ["a", "b"])])
def test_tiles_and_labels_must_match(count: int, labels: list[str]) -> None:
    message = (f"a contact sheet needs tiles and as many labels ({count} tiles, {len(labels)} labels)")
    with pytest.raises(ValueError, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        contact_sheet(tiles(count), labels, 1)
