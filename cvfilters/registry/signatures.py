"""What a filter's declaration tells Python: its signature, its docstring, and whether its function fits.

Below the registry: :func:`cvfilters.registry.catalog.register` calls :func:`check_keywords` when
a filter is registered (a misspelled keyword fails there, naming the filter and the
keyword, not on the first run), and gives every filter object the ``__signature__``
(:func:`signature_of`) and ``__doc__`` (:func:`doc_of`) that ``help()``, IDEs and tab
completion read, as pyvips generates its operations' documentation from their metadata.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from cvfilters.registry.params import Param

IMAGE_DOC = ("numpy.ndarray, PIL.Image.Image, array-like, cv2.UMat or cv2.cuda.GpuMat",
             "uint8, uint16, float32, float64 or int16; 1, 2, 3 or 4 channels (BGR order unless channel_order).")
BACKEND_DOC = ('{"auto", "cpu", "opencl", "cuda"}, default "auto"',
               "Where to run; an unavailable backend named explicitly is an error.")
ORDER_DOC = ('{"bgr", "rgb"}, optional', "The order of the image's colour channels (default BGR, OpenCV's, or "
             "cvfilters.set_defaults); PIL images are RGB.")
LAYOUT_DOC = ('{"hwc", "chw"}, default "hwc"', "chw takes and returns C x H x W arrays.")
_BINDABLE = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def annotation(param: Param) -> Any:
    """The Python type of a parameter's values (``Literal[...]`` of the choices for a choice)."""
    if param.kind == "choice" and param.choices:
        return Literal[tuple(param.choices)]
    return param.kind_record.python_type


def signature_of(params: Iterable[Param]) -> inspect.Signature:
    """``(image, /, *, <params with defaults>, backend="auto", channel_order=None, layout="hwc")``: a filter call."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([
        inspect.Parameter("image", inspect.Parameter.POSITIONAL_ONLY),
        *(inspect.Parameter(p.name, keyword, default=inspect.Parameter.empty if p.required else p.default,
                            annotation=annotation(p)) for p in params),
        inspect.Parameter("backend", keyword, default="auto", annotation=Literal["auto", "cpu", "opencl", "cuda"]),
        inspect.Parameter("channel_order", keyword, default=None, annotation=Literal["bgr", "rgb"] | None),
        inspect.Parameter("layout", keyword, default="hwc", annotation=Literal["hwc", "chw"]),
    ], return_annotation="same type as image")


def describe_type(param: Param) -> str:
    """The numpydoc type line of a parameter: type, default, range or choices, unit."""
    if param.kind == "choice" and param.choices:
        parts = ["{" + ", ".join(repr(c) for c in param.choices) + "}"]
    else:
        parts = [param.kind_record.display]
    if param.required:
        parts.append("required")
    elif param.default is None:
        parts.append("default automatic")
    else:
        parts.append(f"default {param.format(param.default)}")
    if param.min is not None or param.max is not None:
        low = "-inf" if param.min is None else f"{param.min:g}"
        high = "inf" if param.max is None else f"{param.max:g}"
        parts.append(f"range [{low}, {high}]" + (f" {param.unit}" if param.unit else ""))
    elif param.unit:
        parts.append(param.unit)
    if param.odd:
        parts.append("odd")
    return ", ".join(parts)


def doc_of(name: str, summary: str, description: str, params: Sequence[Param]) -> str:
    """A numpydoc docstring: summary, description, then every parameter with type, default and range."""
    lines = [summary, ""]
    if description and description.strip() != summary.strip():
        lines += [description.strip(), ""]
    lines += ["Parameters", "----------", f"image : {IMAGE_DOC[0]}", f"    {IMAGE_DOC[1]}"]
    for param in params:
        lines.append(f"{param.name} : {describe_type(param)}")
        if param.help:
            lines.append(f"    {param.help}")
        if param.large is not None:
            lines.append(f"    Values above {param.large:g} need allow_large (CLI --allow-large).")
    lines += [f"backend : {BACKEND_DOC[0]}", f"    {BACKEND_DOC[1]}", f"channel_order : {ORDER_DOC[0]}",
              f"    {ORDER_DOC[1]}", f"layout : {LAYOUT_DOC[0]}", f"    {LAYOUT_DOC[1]}", "",
              "Returns", "-------", "image", "    Same type, shape and dtype as ``image`` unless the filter "
              "changes them.", "", "Examples", "--------", f">>> out = cvfilters.get_filter({name!r})(image)"
              "  # doctest: +SKIP"]
    return "\n".join(lines)


def check_keywords(filter_name: str, fn: Callable[..., Any], params: Sequence[Param], *, positional: int = 2,
                   given: Iterable[str] = ()) -> None:
    """Refuse a function whose keywords do not match the declared parameters.

    ``fn`` takes ``positional`` leading arguments (``ctx, image`` for a filter body),
    then every declared parameter as a keyword, plus the names in ``given`` (such as a
    warp kernel's ``width`` and ``height``). A function with ``**kwargs`` takes any
    keyword; an extra keyword with a default is allowed (never passed).

    Raises
    ------
    TypeError
        Naming the filter and the keyword: a declared parameter ``fn`` cannot take, or a
        keyword ``fn`` needs that is not declared (the usual cause: a misspelling).
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: nothing to check
        return
    arguments = list(signature.parameters.values())
    if any(a.kind == inspect.Parameter.VAR_POSITIONAL for a in arguments):
        return
    leading = [a for a in arguments if a.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                   inspect.Parameter.POSITIONAL_OR_KEYWORD)][:positional]
    label = f"filter {filter_name!r}: {getattr(fn, '__name__', 'the function')}()"
    if len(leading) < positional:
        raise TypeError(f"{label} must take {positional} positional arguments first, not {len(leading)}")
    rest = [a for a in arguments if a not in leading]
    declared = [p.name for p in params]
    allowed = {*declared, *given}
    takes = {a.name for a in rest if a.kind in _BINDABLE}
    for argument in rest:
        if argument.kind in _BINDABLE and argument.name not in allowed and argument.default is inspect.Parameter.empty:
            raise TypeError(f"{label} takes keyword {argument.name!r}, which is not a declared parameter"
                            f"{_suggest(argument.name, declared)} (declared: {', '.join(declared) or 'none'})")
    if any(a.kind == inspect.Parameter.VAR_KEYWORD for a in rest):
        return
    for name in [*declared, *given]:
        if name not in takes:
            raise TypeError(f"{label} has no keyword {name!r}, a declared parameter"
                            f"{_suggest(name, sorted(takes))} (it takes: {', '.join(sorted(takes)) or 'none'})")


def _suggest(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
