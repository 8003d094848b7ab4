"""TIFF page counts, the header Pillow's parse gives, and the alpha fixes made after OpenCV decodes.

References are independent of cvfilters: tifffile's own page list and the bytes and pixels put in
by tifffile or Pillow, Pillow opening the file directly, and hand-computed arrays.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
import tifffile
from PIL import Image

import cvfilters as cvf
from cvfilters.io import decoders
from tests import cli_runner, makefiles


def multipage_tiff(byteorder: Literal["<", ">"], bigtiff: bool) -> bytes:
    """Three pages of different sizes and tag counts (the walk must step over each directory)."""
    out = BytesIO()
    with tifffile.TiffWriter(out, byteorder=byteorder, bigtiff=bigtiff) as tif:
        tif.write(np.full((4, 5), 7, np.uint8), photometric="minisblack", metadata=None)
        tif.write(np.full((3, 6, 3), 9, np.uint16), photometric="rgb", metadata=None, description="two")
        tif.write(np.full((2, 2), 1.5, np.float32), photometric="minisblack", metadata=None,
                  resolution=(72, 72))
    return out.getvalue()


@pytest.mark.parametrize("bigtiff", [False, True], ids=["classic", "bigtiff"])
@pytest.mark.parametrize("byteorder", ["<", ">"], ids=["II", "MM"])
def test_tiff_pages_are_counted_from_the_chain_of_directories(byteorder: Literal["<", ">"], bigtiff: bool) -> None:
    """The page count read without Pillow (which parses every page) is tifffile's, in both byte orders
    and for BigTIFF; a wrong field size, offset or byte order would count too few or give up (None)."""
    data = multipage_tiff(byteorder, bigtiff)
    want = len(tifffile.TiffFile(BytesIO(data)).pages)
    assert want == 3
    file = BytesIO(data)
    file.seek(5)
    assert decoders._tiff_pages(file) == want
    assert file.tell() == 5  # the caller's position is kept
    if byteorder == "<" or not bigtiff:  # Pillow 13 does not open a big-endian BigTIFF
        header = decoders.parse_header(data)
        assert header is not None and header.frames == want


def test_a_tiff_whose_chain_loops_counts_each_page_once() -> None:
    """A last directory pointing back to the first: the walk stops (no hang) at the pages it has seen."""
    data = bytearray(multipage_tiff("<", False))
    pages = tifffile.TiffFile(BytesIO(bytes(data))).pages
    first, last = pages[0].offset, pages[-1].offset
    count = int.from_bytes(data[last:last + 2], "little")
    data[last + 2 + 12 * count:last + 6 + 12 * count] = first.to_bytes(4, "little")
    assert decoders._tiff_pages(BytesIO(bytes(data))) == 3


def test_a_tiff_cut_inside_its_last_next_page_pointer_counts_its_pages() -> None:
    """The file ends two bytes into the last directory's next-page pointer: the pages walked are counted
    (giving up, None, handed the count back to Pillow's slow per-page parse)."""
    data = multipage_tiff("<", False)
    last = tifffile.TiffFile(BytesIO(data)).pages[-1].offset
    pointer = last + 2 + 12 * int.from_bytes(data[last:last + 2], "little")
    assert decoders._tiff_pages(BytesIO(data[:pointer + 2])) == 3


def test_what_is_not_a_tiff_has_no_page_count() -> None:
    assert decoders._tiff_pages(BytesIO(b"GIF89a" + bytes(20))) is None
    assert decoders._tiff_pages(BytesIO(b"II*\0\0\0\0\0")) is None  # no first directory


def test_a_tiff_header_counts_pages_without_pillows_per_page_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast walk is what counts a TIFF's pages (Pillow's ``n_frames`` costs milliseconds a page)."""
    calls: list[int | None] = []
    walk = decoders._tiff_pages

    def counted(file: BytesIO) -> int | None:
        calls.append(walk(file))
        return calls[-1]

    monkeypatch.setattr(decoders, "_tiff_pages", counted)
    header = decoders.parse_header(multipage_tiff("<", False))
    assert header is not None and header.frames == 3 and calls == [3]


def test_gif_and_bmp_headers_count_frames_as_pillow_does(tmp_path: Path) -> None:
    """A 3-frame GIF has 3 frames and a BMP (whose Pillow image has no ``n_frames``) one."""
    frames = [Image.new("RGB", (6, 4), (40 * k, 0, 0)) for k in range(3)]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:], duration=50)
    Image.new("RGB", (6, 4), (1, 2, 3)).save(tmp_path / "a.bmp")
    with Image.open(tmp_path / "a.gif") as gif:
        want = gif.n_frames
    assert want == 3
    for name, frames_wanted in (("a.gif", want), ("a.bmp", 1)):
        header = decoders.parse_header((tmp_path / name).read_bytes())
        assert header is not None and header.frames == frames_wanted, name


def test_a_tiffs_icc_profile_is_in_its_header() -> None:
    """The ICC profile Pillow's parse finds is kept in the header (it is carried to outputs)."""
    icc = bytes(range(256)) * 2
    out = BytesIO()
    tifffile.imwrite(out, np.zeros((4, 5, 3), np.uint8), photometric="rgb", iccprofile=icc)
    header = decoders.parse_header(out.getvalue())
    assert header is not None and header.icc == icc


def test_sixteen_bit_associated_alpha_edge_pixels_are_unpremultiplied_exactly(tmp_path: Path) -> None:
    """Premultiplied 16-bit pixels, stored (colour, alpha) -> straight colour, hand-computed:
    (0, 65535) -> 0 (not 1), (1, 1) -> 65535, (100, 0) -> 0 (no division by 0), (300, 200) -> 65535
    (clipped, not wrapped), (32768, 65535) -> 32768."""
    stored = np.array([[0, 65535], [1, 1], [100, 0], [300, 200], [32768, 65535]], np.uint16)
    rgba = np.dstack([np.repeat(stored[None, :, :1], 3, axis=2), stored[None, :, 1:]])
    tifffile.imwrite(tmp_path / "a.tif", rgba, photometric="rgb", extrasamples=["assocalpha"])
    straight = np.array([0, 65535, 0, 65535, 32768], np.uint16)
    want = np.dstack([np.repeat(straight[None, :, None], 3, axis=2), stored[None, :, 1:]])
    np.testing.assert_array_equal(cvf.read(tmp_path / "a.tif"), want)


def test_sixteen_bit_unassociated_alpha_is_left_as_stored(tmp_path: Path) -> None:
    """Straight (unassociated) alpha is not divided: the pixels come back as tifffile wrote them."""
    rgba = np.random.default_rng(11).integers(0, 65535, (4, 6, 4), dtype=np.uint16, endpoint=True)
    tifffile.imwrite(tmp_path / "u.tif", rgba, photometric="rgb", extrasamples=["unassalpha"])
    np.testing.assert_array_equal(cvf.read(tmp_path / "u.tif"), rgba[..., [2, 1, 0, 3]])


def test_alpha_fixes_leave_images_without_a_matching_header_alone(tmp_path: Path) -> None:
    """No header (a format Pillow cannot parse) or a TIFF without ExtraSamples: a 4-channel image is kept."""
    bgra = np.random.default_rng(12).integers(0, 65535, (3, 4, 4), dtype=np.uint16, endpoint=True)
    out = BytesIO()
    tifffile.imwrite(out, np.zeros((3, 4), np.uint16), photometric="minisblack")
    grey = decoders.parse_header(out.getvalue())
    for header in (None, grey):
        np.testing.assert_array_equal(decoders.undo_associated_alpha(bgra, header), bgra)
        np.testing.assert_array_equal(decoders.drop_opaque_gif_alpha(bgra, header), bgra)


def gif_header(tmp_path: Path, transparent: bool) -> decoders.Header:
    index = np.arange(12, dtype=np.uint8).reshape(3, 4) % 4
    image = Image.fromarray(index, "P")
    image.putpalette([0, 0, 255, 0, 255, 0, 255, 0, 0, 9, 9, 9])
    if transparent:
        image.save(tmp_path / "g.gif", transparency=3)
    else:
        image.save(tmp_path / "g.gif")
    header = decoders.parse_header((tmp_path / "g.gif").read_bytes())
    assert header is not None
    return header


def test_opaque_gif_alpha_is_dropped_and_transparent_gif_alpha_kept(tmp_path: Path) -> None:
    """The BGRA some OpenCV builds give for every GIF becomes BGR (the same three channels, contiguous)
    where the GIF has no transparent colour, and stays BGRA where it has one."""
    bgra = np.random.default_rng(13).integers(0, 255, (3, 4, 4), dtype=np.uint8, endpoint=True)
    opaque = decoders.drop_opaque_gif_alpha(bgra, gif_header(tmp_path, transparent=False))
    assert opaque.shape == (3, 4, 3) and opaque.flags.c_contiguous
    np.testing.assert_array_equal(opaque, bgra[..., :3])
    np.testing.assert_array_equal(decoders.drop_opaque_gif_alpha(bgra, gif_header(tmp_path, transparent=True)), bgra)


def test_gif_images_without_four_channels_are_left_alone(tmp_path: Path) -> None:
    header = gif_header(tmp_path, transparent=False)
    for image in (np.arange(12, dtype=np.uint8).reshape(3, 4), np.zeros((3, 4, 3), np.uint8)):
        np.testing.assert_array_equal(decoders.drop_opaque_gif_alpha(image, header), image)


def test_a_palette_tiff_whose_colour_map_holds_8_bit_values_up_to_255_shows_its_colours(tmp_path: Path) -> None:
    """A (non-standard) colour map of 8-bit values reaching 255 exactly is scaled right by libtiff only;
    sending it to Pillow (a ``>= 255`` test) would show it almost black."""
    index = makefiles.indices((5, 8), 4)
    colour_map = np.zeros((3, 256), np.uint16)
    colour_map[:, :4] = makefiles.PALETTE_BGR[:, ::-1].T
    makefiles.raw_tiff(tmp_path / "p.tif", index.astype(np.uint8).tobytes(), 8, 5,
                       {258: (3, 8), 259: (3, 1), 262: (3, 3), 277: (3, 1), 320: (3, colour_map.ravel().tolist())})
    np.testing.assert_array_equal(cvf.read(tmp_path / "p.tif"), makefiles.PALETTE_BGR[index])


def test_a_stray_colour_map_on_a_16_bit_rgb_tiff_keeps_its_16_bits(tmp_path: Path) -> None:
    """A ColorMap tag on a TIFF that is not a palette image does not send it to Pillow (which gives 8 bits)."""
    rgb = np.random.default_rng(14).integers(0, 65535, (4, 5, 3), dtype=np.uint16, endpoint=True)
    tifffile.imwrite(tmp_path / "c.tif", rgb, photometric="rgb",
                     extratags=[(320, "H", 3 * 65536, [65535] * (3 * 65536), False)])
    np.testing.assert_array_equal(cvf.read(tmp_path / "c.tif"), rgb[..., ::-1])


def test_a_float64_multi_page_tiff_keeps_every_page(tmp_path: Path) -> None:
    """Pillow cannot open 64-bit float TIFFs: the pages are counted and sized by tifffile, so the file reads as
    its two pages (the CLI wrote the first and dropped the rest without a word). The output pages, read by
    tifffile, are 1 - input to float32's precision (float64 is stored as float32, as for a still image)."""
    pages = np.random.default_rng(3).random((2, 4, 5))
    profile = b"not a real ICC profile, carried as bytes"
    with tifffile.TiffWriter(tmp_path / "in.tif") as writer:
        for page in pages:
            writer.write(page, photometric="minisblack", extratags=[(34675, 7, len(profile), profile, True)])
    with open(tmp_path / "in.tif", "rb") as file:
        header = decoders.tiff_pages_header(file)
        assert file.tell() == 0
    assert header is not None and (header.format, header.size, header.frames) == ("TIFF", (5, 4), 2)
    assert header.tags == {259: 1} and header.icc == profile
    proc = cli_runner.run_cli("apply", tmp_path / "in.tif", "-o", tmp_path / "out.tif", "-f", "invert")
    assert proc.returncode == 0, proc.stderr
    out = tifffile.imread(tmp_path / "out.tif", key=slice(None))
    np.testing.assert_allclose(out, 1.0 - pages, atol=1e-6)


def test_only_a_tiff_of_several_pages_gets_a_header_from_tifffile(tmp_path: Path) -> None:
    """One page (Pillow's to describe), a PNG, and a chain of pages in a file of an unknown TIFF version: none."""
    tifffile.imwrite(tmp_path / "one.tif", np.zeros((2, 3)))
    Image.new("L", (3, 2)).save(tmp_path / "grey.png")
    damaged = bytearray(multipage_tiff("<", False))
    damaged[2] = 44  # neither TIFF (42) nor BigTIFF (43): the chain still walks, tifffile refuses the file
    (tmp_path / "damaged.tif").write_bytes(bytes(damaged))
    for name in ("one.tif", "grey.png", "damaged.tif"):
        with open(tmp_path / name, "rb") as file:
            assert decoders.tiff_pages_header(file) is None, name
