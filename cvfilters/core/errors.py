"""Error types of cvfilters.

Every failure a user can cause has its own type and a one-line message that names
the file or the parameter at fault. The CLI maps :class:`UsageError` to exit code 2
(nothing was written) and :class:`ImageError` to a per-file failure (exit code 1).
"""

from __future__ import annotations

import os


class CvfError(Exception):
    """Base class of every error cvfilters raises on purpose."""


# --- usage: the request itself is wrong, nothing runs -------------------------------
class UsageError(CvfError):
    """The request cannot run as given (exit code 2 from the CLI)."""


class UnknownFilterError(UsageError):
    """A filter name that is not registered."""

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        hint = f" (did you mean {', '.join(suggestions)}?)" if suggestions else ""
        super().__init__(f"unknown filter {name!r}{hint}; `cvfilters list` shows them all")
        self.name = name


class ParameterError(UsageError):
    """A parameter value that is missing, unknown, of the wrong type or out of range."""

    def __init__(self, filter_name: str, param: str, message: str) -> None:
        joiner = "" if message.startswith("=") else " "
        super().__init__(f"{filter_name}: {param}{joiner}{message}" if param else f"{filter_name}: {message}")
        self.filter_name = filter_name
        self.param = param


class SpecError(UsageError):
    """A filter spec or pipeline file that cannot be parsed."""


class BackendUnavailableError(UsageError):
    """An explicitly requested backend that cannot run here."""

    def __init__(self, backend: str, reason: str) -> None:
        super().__init__(f"backend {backend!r} is unavailable: {reason}")
        self.backend = backend
        self.reason = reason


# --- images: one file cannot be read or written; a batch goes on --------------------
class ImageError(CvfError):
    """A problem with one image file; carries the path."""

    cause = "cannot be processed"

    def __init__(self, path: str | os.PathLike[str], detail: str | None = None) -> None:
        self.path = os.fspath(path)
        self.detail = detail or self.cause
        super().__init__(f"{self.path}: {self.detail}")


class ImageReadError(ImageError):
    """Base class of the reasons an input cannot be read."""


class FileMissingError(ImageReadError):
    cause = "no such file"


class NotAFileError(ImageReadError):
    cause = "is a directory or special file, not an image file"


class UnreadableFileError(ImageReadError):
    cause = "cannot be opened (permission denied or I/O error)"


class EmptyFileError(ImageReadError):
    cause = "file is empty (0 bytes)"


class NotAnImageError(ImageReadError):
    cause = "not an image in a format OpenCV can read"


class TruncatedImageError(ImageReadError):
    cause = "image data is truncated or corrupt"


class ImageTooLargeError(ImageReadError):
    cause = "image exceeds the pixel limit"


class UnsupportedDepthError(ImageError):
    cause = "unsupported pixel depth"


class ImageWriteError(ImageError):
    """Base class of the reasons an output cannot be written."""

    cause = "cannot be written"


class OutputExistsError(ImageWriteError):
    cause = "exists already (pass --overwrite to replace it)"


class OverwriteInputError(ImageWriteError):
    cause = "is the input file; cvfilters never overwrites its input"


class InvalidImageError(UsageError, ValueError):
    """An in-memory image of a type, depth or shape cvfilters does not process."""


class ResourceLimitError(ImageError):
    """Processing an image would exceed a resource limit (memory)."""

    cause = "exceeds a resource limit"
