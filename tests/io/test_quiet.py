"""cvfilters.io.quiet: what libraries print about a damaged file stays off the terminal."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import tifffile

from cvfilters.io.quiet import tifffile_logger_quiet

# A TIFF header whose first-page offset points past the end of the file: tifffile logs it.
BROKEN_TIFF = b"II*\x00" + (3042).to_bytes(4, "little") + b"\x00" * 16


def open_broken(path: Path) -> None:
    try:
        tifffile.TiffFile(path).close()
    except Exception:  # noqa: BLE001  (tifffile raises several types on damaged files)
        pass


def test_tifffile_logs_a_damaged_file_and_the_guard_silences_it(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "broken.tif"
    path.write_bytes(BROKEN_TIFF)
    with caplog.at_level(logging.WARNING, logger="tifffile"):
        open_broken(path)
    assert any(record.name == "tifffile" for record in caplog.records)  # the library does log this file
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tifffile"), tifffile_logger_quiet():
        open_broken(path)
    assert not caplog.records


def test_the_logger_is_restored_afterwards(tmp_path: Path) -> None:
    logger = logging.getLogger("tifffile")
    logger.disabled = False
    with tifffile_logger_quiet():
        assert logger.disabled
    assert not logger.disabled
    with pytest.raises(RuntimeError), tifffile_logger_quiet():
        raise RuntimeError("a failure inside")
    assert not logger.disabled
