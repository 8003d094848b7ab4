"""Declared, typed filter parameters: coercion and validation.

A :class:`Param` is declared once per filter parameter. The same declaration turns a
CLI string (``"3"``, ``"[[0,-1,0],[-1,5,-1],[0,-1,0]]"``, ``"@kernel.csv"``) or a
Python value into a canonical, hashable value, rejects what is out of range with a
message that names the filter, the parameter and what is allowed, and formats the
value back so pipelines round-trip losslessly.

What a parameter's values are is its :class:`Kind`: one record per kind (how a value is
coerced, its Python type, its name in docstrings, its type in the ``fx`` stub), looked up by
the name a :class:`Param` declares. The built-in kinds are defined here; a family with kinds
of its own (the masks' files, shapes and sub-pipelines) adds records with :func:`add_kind`.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cvfilters.core.errors import InvalidImageError, ParameterError, SpecError
from cvfilters.core.files import FileRefused, confined, json_unique, npy_array, read_regular, shown

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
MAX_KERNEL_SIDE = 255
MAX_KERNEL_FILE = 4 << 20  # bytes: 255 x 255 numbers written out in full take about 1.5 MiB
KERNEL_SUFFIXES = (".txt", ".csv", ".npy", ".json")
_ALLOW_LARGE: ContextVar[bool] = ContextVar("cvfilters_allow_large", default=False)
COLOR_SYNTAX = ("RGB(A) order, as people write colours: a CSS name (red, navy, transparent), #rgb, #rgba, "
                "#rrggbb or #rrggbbaa, rgb(255,0,0) or rgba(255,0,0,0.5) (0-255 or percentages, alpha 0-1), or "
                "fractions of full scale: [v] (every channel), [gray, alpha], [r,g,b] or [r,g,b,a]")
_HEX = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_RGB_FUNCTION = re.compile(r"(rgba?)\((.*)\)")


@contextmanager
def allow_large(enabled: bool = True) -> Iterator[None]:
    """Within this block, parameters may exceed their ``large`` bound (up to ``max``).

    The CLI's ``--allow-large`` sets it. Bounds like a median size of 255 or 50
    iterations keep a typo from starting a job that runs for hours.
    """
    token = _ALLOW_LARGE.set(enabled)
    try:
        yield
    finally:
        _ALLOW_LARGE.reset(token)


@dataclass(frozen=True)
class Param:
    """One declared parameter of a filter.

    Parameters
    ----------
    name : str
        snake_case name used in Python keywords, CLI specs and pipeline files.
    kind : str
        The name of a registered :class:`Kind`: ``int, float, bool, choice, str, point, kernel,
        color, path``, or one a family added with :func:`add_kind`.
    default : object
        Value used when the parameter is not given; ``None`` with ``required=False``
        means "automatic" and must be documented in ``help``.
    min, max : float, optional
        Inclusive range for ``int``, ``float``, ``point`` and ``color`` values.
    choices : tuple of str, optional
        Allowed values of a ``choice`` parameter.
    unit : str
        Unit shown by ``cvfilters info`` (``px``, ``deg``, ``fraction`` ...).
    help : str
        One sentence for ``cvfilters info``.
    required : bool
        The filter cannot run without it (e.g. the kernel of ``convolve``).
    odd : bool
        Integer values must be odd (0 is allowed when ``min`` is 0, meaning automatic).
    example : object, optional
        A typical value, required for required parameters: ``cvfilters info``, the
        gallery and the registry-wide tests use it.
    large : float, optional
        Values above it are refused unless :func:`allow_large` is active (CLI:
        ``--allow-large``): they are allowed but can make a job run very long.
    image : bool
        A ``path`` parameter naming an image that Python callers may give as an
        array, PIL image or array-like instead (:class:`cvfilters.core.arrays.ImageValue`;
        not saved to pipeline files).
    """

    name: str
    kind: str
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    unit: str = ""
    help: str = ""
    required: bool = False
    odd: bool = False
    example: Any = None
    large: float | None = None
    image: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"Param {self.name!r}: kind must be one of {tuple(_KINDS)}, not {self.kind!r}")
        if self.required and self.example is None:
            raise ValueError(f"Param {self.name!r}: a required parameter needs an example value")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"Param {self.name!r}: a choice parameter needs choices")

    @property
    def kind_record(self) -> Kind:
        """The :class:`Kind` this parameter declares."""
        return _KINDS[self.kind]

    # ------------------------------------------------------------------ coercion
    def coerce(self, value: Any, filter_name: str, *, base_dir: str | os.PathLike[str] | None = None,
               confine: bool = False) -> Any:
        """Turn a CLI string or Python value into this parameter's canonical value.

        Parameters
        ----------
        value : object
            A CLI string, a Python value, or ``"@file"``.
        filter_name : str
            For error messages.
        base_dir : path, optional
            Directory relative file names are read from.
        confine : bool
            Files must stay inside ``base_dir`` (relative names, no ``..`` escape, no
            ``~``): the rule for pipeline files, so a file from elsewhere cannot make
            cvfilters read the user's other files.

        Raises
        ------
        ParameterError
            Naming ``filter_name``, this parameter and what is allowed.
        """
        return self.kind_record.coerce(self, value, Source(filter_name, base_dir, confine))

    def fail(self, filter_name: str, value: Any, allowed: str) -> ParameterError:
        """The error for ``value``: names the filter, this parameter, the value and what is ``allowed``."""
        return ParameterError(filter_name, self.name, f"={_short(value)} {allowed}")

    # ------------------------------------------------------------------ output
    def format(self, value: Any) -> str:
        """Format a canonical value as a CLI spec value (parsed back to the same value)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (tuple, list)):
            return "[" + ",".join(self.format(v) for v in value) + "]"
        if isinstance(value, float):
            return _num(value)
        return str(value)

    def to_json(self, value: Any) -> Any:
        """A JSON/YAML-ready form of a canonical value (tuples become lists)."""
        if self.image and not isinstance(value, (str, type(None))):
            raise SpecError(f"{self.name}={value} is an image in memory; write it to a file and name the file "
                            "to save this pipeline")
        if isinstance(value, tuple):
            return [self.to_json(v) for v in value]
        return value

    def describe(self) -> dict[str, Any]:
        """The declaration as a JSON-ready dict, for ``cvfilters info --json``."""
        info: dict[str, Any] = {"name": self.name, "type": self.kind, "default": self.to_json(self.default)}
        if self.min is not None:
            info["min"] = self.min
        if self.max is not None:
            info["max"] = self.max
        if self.choices:
            info["choices"] = list(self.choices)
        info.update(unit=self.unit, help=self.help, required=self.required)
        if self.odd:
            info["odd"] = True
        if self.example is not None:
            info["example"] = self.format(self.example)
        if self.large is not None:
            info["large"] = self.large
        return info


@dataclass(frozen=True)
class Source:
    """Where a value is coerced: the filter its messages name, and where its ``@file`` names lead.

    Parameters
    ----------
    filter_name : str
        For error messages.
    base_dir : path, optional
        Directory relative file names are read from.
    confine : bool
        Files must stay inside ``base_dir`` (the rule for pipeline files).
    """

    filter_name: str
    base_dir: str | os.PathLike[str] | None = None
    confine: bool = False

    def file(self, name: str, param: str) -> Path:
        """The file a value names (``@name``, or a plain name of a kind of files), as seen from here."""
        if self.confine:
            return _confined(name, Path(self.base_dir or "."), self.filter_name, param)
        path = Path(name).expanduser()
        return Path(self.base_dir) / path if self.base_dir is not None and not path.is_absolute() else path


Coerce = Callable[[Param, Any, Source], Any]
Convert = Callable[[Param, Any, str], Any]
Read = Callable[[Param, Path, str], Any]


@dataclass(frozen=True)
class Kind:
    """One kind of parameter value: the facts every declaration of that kind shares.

    Parameters
    ----------
    name : str
        What a :class:`Param` declares as its ``kind``.
    coerce : callable
        ``coerce(param, value, source)``: the canonical value, or a :class:`ParameterError`
        naming the filter and the parameter; :func:`coercion` builds the usual one.
    python_type : object
        The annotation of generated signatures (a choice's is the ``Literal`` of its choices).
    display : str
        The type in generated docstrings.
    stub : str
        The type in ``cvfilters/fx.pyi`` (the stub's header defines ``_Point``, ``_Path`` ...).
    files : bool
        Values name files: ``@file`` is the file's path (confined to a pipeline file's folder,
        where plain names are paths too), never its content.
    """

    name: str
    coerce: Coerce
    python_type: Any
    display: str
    stub: str
    files: bool = False


def coercion(convert: Convert, read: Read | None = None) -> Coerce:
    """The usual coercion around ``convert(param, value, filter_name)``.

    ``None`` is the default (an error for a required parameter); ``@file`` is the file's path
    for a kind of files, ``read(param, path, filter_name)`` for a kind read from files (kernels),
    and an error for the others; a value ``convert`` rejects with ``TypeError``/``ValueError``
    becomes one line naming the filter, the parameter and the kind.
    """

    def coerce(param: Param, value: Any, source: Source) -> Any:
        filter_name = source.filter_name
        if value is None:
            if param.required:
                raise ParameterError(filter_name, param.name, "is required")
            if param.default is not None:
                raise ParameterError(filter_name, param.name, "has no value (null); leave it out for the default")
            return None
        files = param.kind_record.files
        try:
            if isinstance(value, str) and (value.startswith("@") or (files and source.confine)):
                name = value[1:] if value.startswith("@") else value
                path = source.file(name, param.name)
                if files:
                    return os.fspath(path)
                if read is None:
                    raise ParameterError(filter_name, param.name,
                                         f"does not take a file (@{name}); give a {param.kind} value")
                return read(param, path, filter_name)
            return convert(param, value, filter_name)
        except ParameterError:
            raise
        except RecursionError:
            raise ParameterError(filter_name, param.name, "is nested too deeply") from None
        except (TypeError, ValueError, OverflowError) as exc:
            message = f"={_short(value)} is not a valid {param.kind} ({exc})"
            raise ParameterError(filter_name, param.name, message) from None

    return coerce


_KINDS: dict[str, Kind] = {}


def add_kind(kind: Kind) -> Kind:
    """Register a parameter kind (once per name) so that :class:`Param` declarations can name it."""
    if kind.name in _KINDS:
        raise ValueError(f"parameter kind {kind.name!r} is already defined")
    _KINDS[kind.name] = kind
    return kind


def _number(param: Param, value: Any, filter_name: str, integer: bool) -> float | int:
    shown = value
    if isinstance(value, bool):
        raise param.fail(filter_name, value, f"must be a{'n integer' if integer else ' number'}, not a boolean")
    if isinstance(value, str):
        text = value.strip()
        if integer:
            try:
                value = int(text)
            except ValueError:
                raise param.fail(filter_name, value, "must be an integer") from None
        else:
            try:
                value = float(text)
            except ValueError:
                raise param.fail(filter_name, value, "must be a number") from None
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if integer:
        if isinstance(value, float):
            if not value.is_integer():
                raise param.fail(filter_name, value, "must be an integer")
            value = int(value)
        if not isinstance(value, int):
            raise param.fail(filter_name, value, "must be an integer")
    else:
        if not isinstance(value, (int, float)):
            raise param.fail(filter_name, value, "must be a number")
        value = float(value)
        if not math.isfinite(value):
            raise param.fail(filter_name, value, "must be a finite number")
    _check_range(param, value, filter_name, shown)
    if param.large is not None and value > param.large and not _ALLOW_LARGE.get():
        raise param.fail(filter_name, shown, f"is above {_num(param.large)} and may run for a very long time; "
                         f"--allow-large (Python: cvfilters.allow_large()) permits up to {_num(param.max)}")
    return value


def _check_range(param: Param, value: float, filter_name: str, shown: Any) -> None:
    if (param.min is not None and value < param.min) or (param.max is not None and value > param.max):
        raise param.fail(filter_name, shown, f"is outside [{_num(param.min)}, {_num(param.max)}]")


def _int(param: Param, value: Any, filter_name: str) -> int:
    number = int(_number(param, value, filter_name, integer=True))
    if param.odd and number % 2 == 0 and not (number == 0 and param.min == 0):
        allowed = "must be odd" + (" or 0 (automatic)" if param.min == 0 else "")
        raise param.fail(filter_name, value, allowed)
    return number


def _float(param: Param, value: Any, filter_name: str) -> float:
    return float(_number(param, value, filter_name, integer=False))


def _bool(param: Param, value: Any, filter_name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise param.fail(filter_name, value, "must be true or false")


def _choice(param: Param, value: Any, filter_name: str) -> str:
    text = str(value).strip().lower() if isinstance(value, str) else value
    if text not in param.choices:  # type: ignore[operator]
        raise param.fail(filter_name, value, f"is not one of {', '.join(param.choices or ())}")
    return text


def _str(param: Param, value: Any, filter_name: str) -> str:
    if not isinstance(value, str):
        raise param.fail(filter_name, value, "must be a string")
    return value


def _path(param: Param, value: Any, filter_name: str) -> Any:
    if param.image and not isinstance(value, (str, os.PathLike)):
        from cvfilters.core.arrays import ImageValue

        if isinstance(value, ImageValue):
            return value
        try:
            return ImageValue(value, type(value).__name__)
        except InvalidImageError as exc:
            raise ParameterError(filter_name, param.name, f"is neither a file path nor a usable image ({exc})") \
                from None
    if not isinstance(value, (str, os.PathLike)):
        raise param.fail(filter_name, type(value).__name__, "must be a file path")
    return os.fspath(value)


def _sequence(param: Param, value: Any, filter_name: str) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise param.fail(filter_name, value, "must be a bracketed list such as [0.5,0.5]") from None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise param.fail(filter_name, value, "must be a list")
    return list(value)


def _point(param: Param, value: Any, filter_name: str) -> tuple[float, float]:
    items = _sequence(param, value, filter_name)
    if len(items) != 2:
        raise param.fail(filter_name, value, "must have 2 numbers [x, y]")
    return (_element(param, items[0], filter_name), _element(param, items[1], filter_name))


def _color(param: Param, value: Any, filter_name: str) -> tuple[float, ...]:
    """A colour as fractions of full scale in RGB(A) order (:data:`COLOR_SYNTAX`); filters convert to BGR."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if text and not text.startswith("["):
        items: list[Any] = list(_color_text(param, text, value, filter_name))
        if not all(0.0 <= v <= 1.0 for v in items):
            raise param.fail(filter_name, value, "has a channel out of range (0-255 or 0%-100%; alpha 0-1)")
    else:
        items = _sequence(param, value, filter_name)
    if not 1 <= len(items) <= 4:
        raise param.fail(filter_name, value, "must have 1 to 4 numbers ([v], [gray, alpha], [r,g,b] or [r,g,b,a])")
    return tuple(_element(param, v, filter_name) for v in items)


def _color_text(param: Param, text: str, shown: str, filter_name: str) -> tuple[float, ...]:
    if text.startswith("#"):
        if not _HEX.fullmatch(text):
            raise param.fail(filter_name, shown, "must be #rgb, #rgba, #rrggbb or #rrggbbaa hex digits")
        digits = text[1:]
        pairs = [c * 2 for c in digits] if len(digits) <= 4 else [digits[i:i + 2] for i in range(0, len(digits), 2)]
        return tuple(int(p, 16) / 255 for p in pairs)
    function = _RGB_FUNCTION.fullmatch(text)
    if function:
        parts = [p.strip() for p in function.group(2).replace("/", ",").split(",")]
        if len(parts) not in (3, 4) or (function.group(1) == "rgba" and len(parts) != 4):
            raise param.fail(filter_name, shown, "must be rgb(r, g, b) or rgba(r, g, b, a): r, g, b 0-255 or "
                             "percentages, a 0-1")
        try:
            rgb = [float(p[:-1]) / 100 if p.endswith("%") else float(p) / 255 for p in parts[:3]]
            alpha = [float(p[:-1]) / 100 if p.endswith("%") else float(p) for p in parts[3:]]
        except ValueError:
            raise param.fail(filter_name, shown, "must hold numbers: rgb(255,0,0), rgba(255,0,0,0.5)") from None
        return tuple(rgb + alpha)
    return _css_color(text, shown, filter_name, param.name)


def _element(param: Param, value: Any, filter_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise param.fail(filter_name, value, "must contain numbers only")
    number = float(value)
    if not math.isfinite(number):
        raise param.fail(filter_name, value, "must contain finite numbers")
    _check_range(param, number, filter_name, value)
    return number


def _kernel(param: Param, value: Any, filter_name: str) -> tuple[tuple[float, ...], ...]:
    rows = _sequence(param, value, filter_name)
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = [rows]  # a flat list is a 1-row kernel
    if any(not _is_number(v) and not isinstance(v, (list, tuple))
           for row in rows for v in (row if isinstance(row, (list, tuple)) else [row])):
        raise param.fail(filter_name, _short(value), "must contain numbers only (not booleans or strings)")
    try:
        array = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise param.fail(filter_name, _short(value), "must be a rectangular 2-D list of numbers") from None
    if array.ndim != 2 or array.size == 0:
        raise param.fail(filter_name, _short(value), "must be a non-empty 2-D list of numbers")
    if max(array.shape) > MAX_KERNEL_SIDE:
        shape = f"{array.shape[0]}x{array.shape[1]}"
        raise param.fail(filter_name, shape, f"is larger than {MAX_KERNEL_SIDE} on a side")
    if not np.all(np.isfinite(array)):
        raise param.fail(filter_name, _short(value), "must contain finite numbers")
    return tuple(tuple(float(v) for v in row) for row in array)


def _read_kernel(param: Param, path: Path, filter_name: str) -> tuple[tuple[float, ...], ...]:
    return _kernel(param, load_kernel_file(path, filter_name, param.name), filter_name)


add_kind(Kind("int", coercion(_int), int, "int", "int"))
add_kind(Kind("float", coercion(_float), float, "float", "float"))
add_kind(Kind("bool", coercion(_bool), bool, "bool", "bool"))
add_kind(Kind("choice", coercion(_choice), str, "str", "str"))
STR = add_kind(Kind("str", coercion(_str), str, "str", "str"))
add_kind(Kind("point", coercion(_point), tuple[float, float], "(float, float)", "_Point"))
add_kind(Kind("kernel", coercion(_kernel, _read_kernel), tuple[tuple[float, ...], ...], "2-D sequence of float",
              "_Kernel"))
add_kind(Kind("color", coercion(_color), tuple[float, ...], "sequence of float", "_Color"))
PATH = add_kind(Kind("path", coercion(_path), str | os.PathLike[str], "path", "_Path", files=True))


def _css_color(name: str, shown: str, filter_name: str, param: str) -> tuple[float, ...]:
    """A CSS colour name (CSS3, from webcolors) as RGB(A) fractions; ``transparent`` is ``[0, 0, 0, 0]``."""
    if name == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    import webcolors

    try:
        return tuple(v / 255 for v in webcolors.name_to_rgb(name, spec=webcolors.CSS3))
    except ValueError:
        close = difflib.get_close_matches(name, webcolors.names(webcolors.CSS3), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ParameterError(filter_name, param, f"={_short(shown)} is not a colour{hint}; colours are "
                             "CSS names, #rrggbb[aa], rgb(...) or [r,g,b(,a)] fractions") from None


def _confined(name: str, root: Path, filter_name: str, param: str) -> Path:
    """``root / name`` resolved, refusing names that leave ``root`` (absolute, ``~``, ``..``, symlinks out)."""
    try:
        if Path(name).is_absolute() or name.startswith("~"):
            raise FileRefused(name, "is outside the pipeline file's folder")
        return confined(root / name, root)
    except FileRefused:
        raise ParameterError(filter_name, param, f"file {shown(name)!r} is outside the pipeline file's folder; "
                             "files named in a pipeline file must be inside its folder") from None


def load_kernel_file(path: Path, filter_name: str, param: str) -> list[list[float]]:
    """Read a kernel from a .txt/.csv (rows of numbers), .npy or .json file (a regular file of at most 4 MiB)."""
    suffix = path.suffix.lower()
    if suffix not in KERNEL_SUFFIXES:
        raise ParameterError(filter_name, param,
                             f"file {shown(path)} must end in one of {', '.join(KERNEL_SUFFIXES)}")
    try:
        data = read_regular(path, MAX_KERNEL_FILE)
        if suffix == ".npy":
            return npy_array(data, path, MAX_KERNEL_SIDE * MAX_KERNEL_SIDE).tolist()
        text = data.decode("utf-8-sig")
        if suffix == ".json":
            return json_unique(text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an empty file: np.loadtxt warns, then the kernel check refuses it
            return np.loadtxt(text.replace(",", " ").splitlines(), ndmin=2).tolist()
    except FileRefused as exc:
        raise ParameterError(filter_name, param, f"file {shown(path)} {exc.reason}") from None
    except (ValueError, RecursionError) as exc:
        reason = shown(str(exc).strip().splitlines()[0]) if str(exc).strip() else type(exc).__name__
        raise ParameterError(filter_name, param, f"file {shown(path)} is not a kernel ({reason})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _num(value: float | None) -> str:
    if value is None:
        return "inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _short(value: Any, limit: int = 40) -> str:
    """``value`` for a one-line message: arrays by shape and dtype, other reprs on one line and cut at ``limit``."""
    if isinstance(value, np.ndarray):
        return f"<array {'x'.join(str(n) for n in value.shape)} {value.dtype}>"
    text = value if isinstance(value, str) and value.isprintable() else " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
