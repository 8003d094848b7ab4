"""The error types of cvfilters: their one-line messages (written out by hand) and their attributes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cvfilters.core.errors import (
    BackendUnavailableError,
    CvfError,
    EmptyFileError,
    FileMissingError,
    ImageError,
    ImageReadError,
    ImageTooLargeError,
    ImageWriteError,
    InvalidImageError,
    NotAFileError,
    NotAnImageError,
    OutputExistsError,
    OverwriteInputError,
    ParameterError,
    ResourceLimitError,
    SpecError,
    TruncatedImageError,
    UnknownFilterError,
    UnreadableFileError,
    UnsupportedDepthError,
    UsageError,
)


def test_unknown_filter_names_it_and_the_suggestions() -> None:
    error = UnknownFilterError("blurr", ["blur", "box_blur"])
    assert str(error) == "unknown filter 'blurr' (did you mean blur, box_blur?); `cvfilters list` shows them all"
    assert error.name == "blurr"


@pytest.mark.parametrize("suggestions", [None, []])
def test_unknown_filter_without_suggestions_has_no_hint(suggestions: list[str] | None) -> None:
    error = UnknownFilterError("zzz", suggestions)
    assert str(error) == "unknown filter 'zzz'; `cvfilters list` shows them all"
    assert error.name == "zzz"


@pytest.mark.parametrize(("param", "message", "text"), [
    ("sigma", "must be at least 0", "gaussian_blur: sigma must be at least 0"),
    ("sigma", "=abc is not a number", "gaussian_blur: sigma=abc is not a number"),
    ("", "the result would be too large", "gaussian_blur: the result would be too large"),
])
def test_parameter_errors_join_filter_parameter_and_message(param: str, message: str, text: str) -> None:
    """A space before the message, none before ``=value``; no parameter, no parameter name."""
    error = ParameterError("gaussian_blur", param, message)
    assert str(error) == text
    assert (error.filter_name, error.param) == ("gaussian_blur", param)


def test_backend_unavailable_names_the_backend_and_the_reason() -> None:
    error = BackendUnavailableError("cuda", "no CUDA device")
    assert str(error) == "backend 'cuda' is unavailable: no CUDA device"
    assert (error.backend, error.reason) == ("cuda", "no CUDA device")


@pytest.mark.parametrize(("kind", "text"), [
    (ImageError, "cannot be processed"),
    (FileMissingError, "no such file"),
    (NotAFileError, "is a directory or special file, not an image file"),
    (UnreadableFileError, "cannot be opened (permission denied or I/O error)"),
    (EmptyFileError, "file is empty (0 bytes)"),
    (NotAnImageError, "not an image in a format OpenCV can read"),
    (TruncatedImageError, "image data is truncated or corrupt"),
    (ImageTooLargeError, "image exceeds the pixel limit"),
    (UnsupportedDepthError, "unsupported pixel depth"),
    (ImageWriteError, "cannot be written"),
    (OutputExistsError, "exists already (pass --overwrite to replace it)"),
    (OverwriteInputError, "is the input file; cvfilters never overwrites its input"),
    (ResourceLimitError, "exceeds a resource limit"),
])
def test_image_errors_name_the_path_and_their_cause(kind: type[ImageError], text: str) -> None:
    """The path as a string (a ``Path`` too), then the type's cause unless a detail is given."""
    error = kind(Path("shots") / "a.png")
    assert str(error) == f"shots/a.png: {text}"
    assert (error.path, error.detail) == ("shots/a.png", text)
    detailed = kind("b.png", "bad Huffman table")
    assert str(detailed) == "b.png: bad Huffman table"
    assert (detailed.path, detailed.detail) == ("b.png", "bad Huffman table")
    assert kind("c.png", "").detail == text  # an empty detail says nothing: the cause stands


def test_the_hierarchy_separates_usage_from_per_image_errors() -> None:
    """The CLI exits 2 on a :class:`UsageError` and goes on past an :class:`ImageError`."""
    for usage in (UnknownFilterError, ParameterError, SpecError, BackendUnavailableError, InvalidImageError):
        assert issubclass(usage, UsageError) and not issubclass(usage, ImageError)
    assert issubclass(InvalidImageError, ValueError)
    for read in (FileMissingError, NotAFileError, UnreadableFileError, EmptyFileError, NotAnImageError,
                 TruncatedImageError, ImageTooLargeError):
        assert issubclass(read, ImageReadError)
    for write in (OutputExistsError, OverwriteInputError):
        assert issubclass(write, ImageWriteError)
    assert issubclass(UsageError, CvfError) and issubclass(ImageError, CvfError)
    assert not issubclass(UsageError, ImageError)
