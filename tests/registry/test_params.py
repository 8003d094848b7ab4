"""Param coercion: every kind's accepted values and every refusal's exact one-line message.

Expected values and messages are written out here (the CLI contract: ``name: param=value
what is allowed``); each row is a plausible bug's tripwire (a wrong bound, a lost
``strip``, a boolean taken for a number, a message that no longer names the value).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cvfilters.core.arrays import ImageValue
from cvfilters.core.errors import ParameterError, SpecError
from cvfilters.registry import params
from cvfilters.registry.params import Kind, Param, Source, add_kind, allow_large, coercion

SIZE = Param("size", "int", 5, min=1, max=9, odd=True)
KSIZE = Param("ksize", "int", 0, min=0, max=31, odd=True)
BIG = Param("size", "int", 5, min=1, max=101, large=51)
SIGMA = Param("sigma", "float", 2.0, min=0.1, max=100.0)
UNBOUNDED = Param("bias", "float", 0.0)
FLAG = Param("invert", "bool", False)
MODE = Param("mode", "choice", "a", choices=("a", "b"))
TEXT = Param("label", "str", "x")
CENTER = Param("center", "point", (0.5, 0.5), min=0.0, max=1.0)
COLOR = Param("color", "color", (0.0,), min=0.0, max=1.0)
KERNEL = Param("kernel", "kernel", None, required=True, example=((1.0,),))
FILE = Param("file", "path", None, required=True, example="x.cube")
POSITIVE = Param("gain", "float", 1.0, min=0.0)
SCALE = Param("scale", "choice", "auto", choices=("auto", "1", "255"))

ACCEPTED = [
    (SIZE, "7", 7), (SIZE, " 3 ", 3), (SIZE, 9, 9), (SIZE, 1.0, 1), (SIZE, np.int64(5), 5),
    (KSIZE, 0, 0), (KSIZE, "0", 0), (KSIZE, 31, 31),
    (BIG, 51, 51),
    (SIGMA, "0.1", 0.1), (SIGMA, 100, 100.0), (SIGMA, np.float32(2.5), 2.5), (SIGMA, " 1e1 ", 10.0),
    (UNBOUNDED, -1e9, -1e9),
    (FLAG, True, True), (FLAG, "YES", True), (FLAG, " on", True), (FLAG, "1", True), (FLAG, "off", False),
    (FLAG, "No", False), (FLAG, 0, False), (FLAG, 1, True), (FLAG, np.bool_(True), True),
    (MODE, "B", "b"), (MODE, " a ", "a"),
    (TEXT, "hello", "hello"),
    (CENTER, "[0.25, 1]", (0.25, 1.0)), (CENTER, (0, 0.5), (0.0, 0.5)), (CENTER, np.array([0.1, 0.2]), (0.1, 0.2)),
    (COLOR, [1], (1.0,)), (COLOR, "[0.1,0.2,0.3,0.4]", (0.1, 0.2, 0.3, 0.4)),
    (KERNEL, "[1, 2, 1]", ((1.0, 2.0, 1.0),)), (KERNEL, [[0, 1], [2, 3]], ((0.0, 1.0), (2.0, 3.0))),
    (KERNEL, [[0.0] * 255], (tuple([0.0] * 255),)),  # the largest side allowed
    (SCALE, "255", "255"),
    # colours as people write them, RGB(A) fractions: 0x88 / 255, 0x80 / 255, 50% alpha, percentages
    (COLOR, "#f008", (1.0, 0.0, 0.0, 0x88 / 255)), (COLOR, "#ff000080", (1.0, 0.0, 0.0, 128 / 255)),
    (COLOR, "rgba(255, 0, 0, 50%)", (1.0, 0.0, 0.0, 0.5)), (COLOR, "rgb(100%, 50%, 0%)", (1.0, 0.5, 0.0)),
    (COLOR, "RGBA(0,0,255,1)", (0.0, 0.0, 1.0, 1.0)), (COLOR, "rgb(0,0,0,0.5)", (0.0, 0.0, 0.0, 0.5)),
    (COLOR, "rgb(255, 0, 0 / 50%)", (1.0, 0.0, 0.0, 0.5)),  # CSS's slash before the alpha
    (KERNEL, [[1, 10**20]], ((1.0, 1e20),)),  # an integer past int64 is still a float64 weight
    (FILE, "a/b.cube", "a/b.cube"), (FILE, Path("c.cube"), "c.cube"),
]


@pytest.mark.parametrize(("param", "value", "expected"), ACCEPTED)
def test_accepted_values_coerce_to_canonical_ones(param: Param, value: Any, expected: Any) -> None:
    out = param.coerce(value, "f")
    assert out == expected and type(out) is type(expected)


REFUSED = [
    (SIZE, "4", "f: size=4 must be odd"),
    (KSIZE, 4, "f: ksize=4 must be odd or 0 (automatic)"),
    (SIZE, True, "f: size=True must be an integer, not a boolean"),
    (SIGMA, False, "f: sigma=False must be a number, not a boolean"),
    (SIZE, "x", "f: size=x must be an integer"),
    (SIZE, 2.5, "f: size=2.5 must be an integer"),
    (SIZE, [3], "f: size=[3] must be an integer"),
    (SIZE, 11, "f: size=11 is outside [1, 9]"),
    (SIZE, 0, "f: size=0 is outside [1, 9]"),
    (SIGMA, "0.05", "f: sigma=0.05 is outside [0.1, 100]"),
    (SIGMA, "abc", "f: sigma=abc must be a number"),
    (SIGMA, "nan", "f: sigma=nan must be a finite number"),
    (UNBOUNDED, math.inf, "f: bias=inf must be a finite number"),
    (SIGMA, "7j", "f: sigma=7j must be a number"),
    (SIGMA, [1.0], "f: sigma=[1.0] must be a number"),
    (BIG, 53, "f: size=53 is above 51 and may run for a very long time; --allow-large (Python: "
              "cvfilters.allow_large()) permits up to 101"),
    (FLAG, "maybe", "f: invert=maybe must be true or false"),
    (FLAG, 2, "f: invert=2 must be true or false"),
    (MODE, "c", "f: mode=c is not one of a, b"),
    (TEXT, 3, "f: label=3 must be a string"),
    (FILE, 3, "f: file=int must be a file path"),  # the type is named
    (CENTER, "0.5", "f: center=0.5 must be a list"),
    (CENTER, "[0.5", "f: center=[0.5 must be a bracketed list such as [0.5,0.5]"),
    (CENTER, [0.5], "f: center=[0.5] must have 2 numbers [x, y]"),
    (CENTER, [0.5, 2], "f: center=2 is outside [0, 1]"),
    (CENTER, [0.5, "a"], "f: center=a must contain numbers only"),
    (CENTER, [True, 0.5], "f: center=True must contain numbers only"),
    (CENTER, [0.5, math.nan], "f: center=nan must contain finite numbers"),
    (COLOR, 5, "f: color=5 must be a list"),
    (COLOR, "[0.1,", "f: color=[0.1, must be a bracketed list such as [0.5,0.5]"),
    (COLOR, [0.5, 2], "f: color=2 is outside [0, 1]"),
    (COLOR, [0.5, "a"], "f: color=a must contain numbers only"),
    (COLOR, [], "f: color=[] must have 1 to 4 numbers ([v], [gray, alpha], [r,g,b] or [r,g,b,a])"),
    (COLOR, [0, 0, 0, 0, 0],
     "f: color=[0, 0, 0, 0, 0] must have 1 to 4 numbers ([v], [gray, alpha], [r,g,b] or [r,g,b,a])"),
    (KERNEL, "[[1, 2], [3]]", "f: kernel=[[1, 2], [3]] must be a rectangular 2-D list of numbers"),
    (KERNEL, "[[1, 2], 3]", "f: kernel=[[1, 2], 3] must be a rectangular 2-D list of numbers"),
    (KERNEL, "[]", "f: kernel=[] must be a non-empty 2-D list of numbers"),
    (KERNEL, [[[1]]], "f: kernel=[[[1]]] must be a non-empty 2-D list of numbers"),
    (KERNEL, [[math.inf]], "f: kernel=[[inf]] must contain finite numbers"),
    (KERNEL, [[0.0] * 256], "f: kernel=1x256 is larger than 255 on a side"),
    (KERNEL, None, "f: kernel is required"),
    (SIZE, None, "f: size has no value (null); leave it out for the default"),
    (SIGMA, "@k.txt", "f: sigma does not take a file (@k.txt); give a float value"),
    (POSITIVE, -1, "f: gain=-1 is outside [0, inf]"),
    (SCALE, 255, "f: scale=255 is not one of auto, 1, 255"),  # choices are the strings, not numbers
    (KERNEL, "[1,", "f: kernel=[1, must be a bracketed list such as [0.5,0.5]"),
    (CENTER, [0.5, 10**400], "f: center=[0.5, " + "1" + "0" * 30 + "... is not a valid point (int too large to "
                             "convert to float)"),  # the value shortened to 40 characters
    (KERNEL, "[" * 100000 + "]" * 100000, "f: kernel is nested too deeply"),
    (COLOR, "rgba(255,0,0)", "f: color=rgba(255,0,0) must be rgb(r, g, b) or rgba(r, g, b, a): r, g, b 0-255 or "
                             "percentages, a 0-1"),
    (COLOR, "rgb(1,2)", "f: color=rgb(1,2) must be rgb(r, g, b) or rgba(r, g, b, a): r, g, b 0-255 or "
                        "percentages, a 0-1"),
    (COLOR, "rgb(a,b,c)", "f: color=rgb(a,b,c) must hold numbers: rgb(255,0,0), rgba(255,0,0,0.5)"),
    (COLOR, "rgb(300,0,0)", "f: color=rgb(300,0,0) has a channel out of range (0-255 or 0%-100%; alpha 0-1)"),
    (COLOR, "#ggg", "f: color=#ggg must be #rgb, #rgba, #rrggbb or #rrggbbaa hex digits"),
    (COLOR, "#12345", "f: color=#12345 must be #rgb, #rgba, #rrggbb or #rrggbbaa hex digits"),
    (COLOR, "redd", "f: color=redd is not a colour (did you mean 'red'?); colours are CSS names, #rrggbb[aa], "
                    "rgb(...) or [r,g,b(,a)] fractions"),
    (COLOR, "xyzzy", "f: color=xyzzy is not a colour; colours are CSS names, #rrggbb[aa], rgb(...) or [r,g,b(,a)] "
                     "fractions"),
]


@pytest.mark.parametrize(("param", "value", "message"), REFUSED)
def test_refusals_are_one_line_naming_the_value(param: Param, value: Any, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        param.coerce(value, "f")
    assert str(caught.value) == message


def test_allow_large_lifts_the_large_limit_but_not_the_maximum() -> None:
    with allow_large():
        assert BIG.coerce(101, "f") == 101
        with pytest.raises(ParameterError, match=r"^f: size=103 is outside \[1, 101\]$"):
            BIG.coerce(103, "f")
    with pytest.raises(ParameterError, match="is above 51"):
        BIG.coerce(52, "f")


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ParameterError) as caught:
        SIGMA.coerce("x" * 60, "f")
    assert str(caught.value) == "f: sigma=" + "x" * 37 + "... must be a number"
    with pytest.raises(ParameterError) as caught:
        SIGMA.coerce("x" * 40, "f")  # 40 characters: shown whole
    assert str(caught.value) == "f: sigma=" + "x" * 40 + " must be a number"


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("k.txt", "1 2 1\n0 1 0\n", ((1.0, 2.0, 1.0), (0.0, 1.0, 0.0))),
    ("k.csv", "1,2\n3,4\n", ((1.0, 2.0), (3.0, 4.0))),
    ("k.json", "[[0.5, 0.25]]", ((0.5, 0.25),)),
    ("row.txt", "1 2 3\n", ((1.0, 2.0, 3.0),)),
])
def test_kernel_files_by_suffix(tmp_path: Path, name: str, text: str, expected: tuple) -> None:
    (tmp_path / name).write_text(text)
    assert KERNEL.coerce(f"@{name}", "f", base_dir=tmp_path) == expected
    assert KERNEL.coerce(f"@{tmp_path / name}", "f") == expected  # absolute, no base folder


def test_kernel_file_errors_name_the_file(tmp_path: Path) -> None:
    np.save(tmp_path / "k.npy", np.eye(2))
    assert KERNEL.coerce("@k.npy", "f", base_dir=tmp_path) == ((1.0, 0.0), (0.0, 1.0))
    (tmp_path / "bad.txt").write_text("1 x\n")
    with pytest.raises(ParameterError, match=r"^f: kernel file .*bad\.txt is not a kernel \("):
        KERNEL.coerce("@bad.txt", "f", base_dir=tmp_path)
    with pytest.raises(ParameterError, match=r"^f: kernel file .*gone\.txt cannot be read \(No such file"):
        KERNEL.coerce("@gone.txt", "f", base_dir=tmp_path)
    with pytest.raises(ParameterError, match=r"^f: kernel file .*k\.png must end in one of \.txt, \.csv, \.npy, "
                                             r"\.json$"):
        KERNEL.coerce("@k.png", "f", base_dir=tmp_path)


def test_confined_files_stay_inside_the_pipeline_folder(tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("1\n")
    assert KERNEL.coerce("@k.txt", "f", base_dir=tmp_path, confine=True) == ((1.0,),)
    assert FILE.coerce("x.cube", "f", base_dir=tmp_path, confine=True) == str((tmp_path / "x.cube").resolve())
    with pytest.raises(ParameterError) as caught:
        FILE.coerce("../x.cube", "f", base_dir=tmp_path, confine=True)
    assert str(caught.value).startswith("f: file file '../x.cube' is outside the pipeline file's folder")
    for escape in ("../k.txt", "/etc/passwd", "~/k.txt"):
        with pytest.raises(ParameterError) as caught:
            KERNEL.coerce(f"@{escape}", "f", base_dir=tmp_path, confine=True)
        assert str(caught.value) == (f"f: kernel file {escape!r} is outside the pipeline file's folder; files named "
                                     "in a pipeline file must be inside its folder")


def test_confined_files_without_a_folder_are_in_the_current_one(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Confinement with no base folder (or an empty one) reads from the current folder."""
    (tmp_path / "k.txt").write_text("2\n")
    monkeypatch.chdir(tmp_path)
    assert KERNEL.coerce("@k.txt", "f", confine=True) == ((2.0,),)
    assert Source("f", confine=True).file("k.txt", "kernel") == (tmp_path / "k.txt").resolve()
    assert Source("f", "", confine=True).file("k.txt", "kernel") == (tmp_path / "k.txt").resolve()


@pytest.mark.parametrize(("param", "value", "text"), [
    (FLAG, True, "true"), (FLAG, False, "false"), (CENTER, (0.25, 1.0), "[0.25,1]"), (SIGMA, 2.0, "2"),
    (SIGMA, 0.1, "0.1"), (KERNEL, ((1.0, -2.5),), "[[1,-2.5]]"), (MODE, "b", "b"), (SIZE, 7, "7"),
])
def test_format_writes_what_coerce_reads_back(param: Param, value: Any, text: str) -> None:
    assert param.format(value) == text
    assert param.coerce(text, "f") == value


def test_declarations_are_checked() -> None:
    with pytest.raises(ValueError, match=r"^Param 'x': kind must be one of \('int', 'float', 'bool', 'choice', 'str', "
                                         r"'point', 'kernel', 'color', 'path'.*\), not 'complex'$"):
        Param("x", "complex", 0)
    with pytest.raises(ValueError, match=r"^Param 'x': a required parameter needs an example value$"):
        Param("x", "int", None, required=True)
    with pytest.raises(ValueError, match=r"^Param 'x': a choice parameter needs choices$"):
        Param("x", "choice", "a")
    with pytest.raises(ValueError, match=r"^Param 'x': a choice parameter needs choices$"):
        Param("x", "choice", "a", choices=())
    assert Param("x", "int", None, required=True, example=0).example == 0  # a falsy example is one
    assert Param("x", "int", 3, example=None).example is None  # optional parameters need none
    assert Param("x", "str", "a", choices=()).choices == ()  # only a choice needs choices


def test_kernel_npy_files_never_unpickle(tmp_path: Path) -> None:
    """An object array in a .npy needs pickle to load: refused as not a kernel, never executed."""
    np.save(tmp_path / "evil.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ParameterError, match=r"^f: kernel file .*evil\.npy holds Python objects; only numeric \.npy "
                                             r"arrays are read$"):
        KERNEL.coerce("@evil.npy", "f", base_dir=tmp_path)


# ------------------------------------------------------------------ coercion(), add_kind(), Source.file()
# The built-in kinds' coerce functions are built by ``coercion`` at import; these build their own from
# a recording convert, so a change to ``coercion`` shows here (mutation testing's import-time blind spot).
def _recording(calls: list[tuple[str, Any]], fail: BaseException | None = None) -> Any:
    def convert(param: Param, value: Any, filter_name: str) -> Any:
        calls.append((filter_name, value))
        if fail is not None:
            raise fail
        return f"<{param.name}={value}>"
    return convert


def _reading(calls: list[tuple[str, Any]]) -> Any:
    def read(param: Param, path: Path, filter_name: str) -> Any:
        calls.append((filter_name, path))
        return ("read", param.name, path.name)
    return read


NUMBER = Param("n", "int", 3)
AUTOMATIC = Param("n", "int", None)
REQUIRED = Param("n", "int", None, required=True, example=1)
A_FILE = Param("lut", "path", None)


def test_coercion_gives_none_for_an_automatic_value_and_refuses_a_missing_one() -> None:
    calls: list[tuple[str, Any]] = []
    coerce = coercion(_recording(calls))
    assert coerce(AUTOMATIC, None, Source("f")) is None
    for param, message in [(REQUIRED, "f: n is required"),
                           (NUMBER, "f: n has no value (null); leave it out for the default")]:
        with pytest.raises(ParameterError) as caught:
            coerce(param, None, Source("f"))
        assert (str(caught.value), caught.value.filter_name, caught.value.param) == (message, "f", "n")
    assert calls == []
    assert coerce(NUMBER, "7", Source("g")) == "<n=7>" and calls == [("g", "7")]


def test_coercion_of_a_file_value(tmp_path: Path) -> None:
    """``@name``: the file's path for a kind of files, what ``read`` makes of it for the others."""
    calls: list[tuple[str, Any]] = []
    files = coercion(_recording(calls))
    assert files(A_FILE, "@a.cube", Source("f", tmp_path)) == str(tmp_path / "a.cube")
    assert files(A_FILE, "@/x/a.cube", Source("f", tmp_path)) == "/x/a.cube"
    assert files(A_FILE, "a.cube", Source("f", tmp_path)) == "<lut=a.cube>"  # a plain name: converted
    assert files(A_FILE, "a.cube", Source("f", tmp_path, confine=True)) == str((tmp_path / "a.cube").resolve())
    assert calls == [("f", "a.cube")]
    read = coercion(_recording(calls), _reading(calls))
    assert read(NUMBER, "@k.txt", Source("g", tmp_path)) == ("read", "n", "k.txt")
    assert calls[-1] == ("g", tmp_path / "k.txt")
    assert read(NUMBER, "k.txt", Source("g", tmp_path, confine=True)) == "<n=k.txt>"  # not a kind of files
    with pytest.raises(ParameterError) as caught:
        coercion(_recording(calls))(NUMBER, "@k.txt", Source("h", tmp_path))
    assert (str(caught.value), caught.value.param) == ("h: n does not take a file (@k.txt); give a int value", "n")
    with pytest.raises(ParameterError) as caught:
        read(NUMBER, "@../k.txt", Source("g", tmp_path, confine=True))
    assert str(caught.value) == ("g: n file '../k.txt' is outside the pipeline file's folder; files named in a "
                                 "pipeline file must be inside its folder")


@pytest.mark.parametrize(("error", "message"), [
    (ValueError("bad digits"), "f: n='x\\ny' is not a valid int (bad digits)"),
    (TypeError("no len"), "f: n='x\\ny' is not a valid int (no len)"),
    (OverflowError("too big"), "f: n='x\\ny' is not a valid int (too big)"),
    (RecursionError("deep"), "f: n is nested too deeply"),
    (ParameterError("inner", "m", "is its own"), "inner: m is its own"),  # passed on as it is
])
def test_coercion_turns_a_convert_error_into_one_line(error: Exception, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        coercion(_recording([], error))(NUMBER, "x\ny", Source("f"))
    assert str(caught.value) == message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__ == (error.__class__ is not
                                                                                    ParameterError)


def test_coercion_lets_other_errors_through() -> None:
    with pytest.raises(KeyError):
        coercion(_recording([], KeyError("k")))(NUMBER, "1", Source("f"))


def test_add_kind_registers_a_name_once() -> None:
    kind = Kind("test_upper", coercion(lambda p, v, f: str(v).upper()), str, "str", "str")
    try:
        assert add_kind(kind) is kind
        param = Param("word", "test_upper", "a")
        assert param.kind_record is kind
        assert param.coerce("abc", "f") == "ABC"
        with pytest.raises(ValueError, match=r"^parameter kind 'test_upper' is already defined$"):
            add_kind(Kind("test_upper", kind.coerce, int, "int", "int"))
        assert params._KINDS["test_upper"] is kind
    finally:
        del params._KINDS["test_upper"]
    with pytest.raises(ValueError, match=r"^Param 'word': kind must be one of \('int', "):
        Param("word", "test_upper", "a")
    assert Source("f").file("~/k.txt", "p") == Path.home() / "k.txt"


# ------------------------------------------------------------------ image values, describe(), to_json()
SOURCE = Param("source", "path", None, image=True)


def test_an_image_parameter_takes_arrays_and_paths() -> None:
    array = np.arange(6, dtype=np.uint8).reshape(2, 3)
    value = SOURCE.coerce(array, "f")
    assert isinstance(value, ImageValue) and np.array_equal(value.bgr(), array)
    assert SOURCE.coerce(value, "f") is value
    assert SOURCE.coerce("a.png", "f") == "a.png" and SOURCE.coerce(Path("b.png"), "f") == "b.png"
    with pytest.raises(ParameterError) as caught:
        SOURCE.coerce(np.zeros((2, 2), np.int64), "f")
    assert str(caught.value) == ("f: source is neither a file path nor a usable image (ndarray: dtype int64, shape "
                                 "(2, 2) is not an image (use uint8, uint16 or float32, H x W or H x W x C))")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    with pytest.raises(ParameterError, match=r"^f: file=ndarray must be a file path$"):
        FILE.coerce(array, "f")  # not an image parameter: arrays are refused


def test_to_json_lists_tuples_and_refuses_images_in_memory() -> None:
    assert KERNEL.to_json(((1.0, 2.0), (3.0, 4.0))) == [[1.0, 2.0], [3.0, 4.0]]
    assert SOURCE.to_json("a.png") == "a.png" and SOURCE.to_json(None) is None
    with pytest.raises(SpecError) as caught:
        SOURCE.to_json(SOURCE.coerce(np.zeros((2, 2), np.uint8), "f"))
    assert str(caught.value) == ("source=<array 2x2 uint8> is an image in memory; write it to a file and name the "
                                 "file to save this pipeline")


def test_describe_is_the_declaration_as_json() -> None:
    full = Param("size", "int", 5, min=1, max=101, unit="px", help="window side", odd=True, example=7, large=51)
    assert full.describe() == {"name": "size", "type": "int", "default": 5, "min": 1, "max": 101, "unit": "px",
                               "help": "window side", "required": False, "odd": True, "example": "7", "large": 51}
    assert MODE.describe() == {"name": "mode", "type": "choice", "default": "a", "choices": ["a", "b"], "unit": "",
                               "help": "", "required": False}
    assert KERNEL.describe() == {"name": "kernel", "type": "kernel", "default": None, "unit": "", "help": "",
                                 "required": True, "example": "[[1]]"}
    assert CENTER.describe()["default"] == [0.5, 0.5]
    assert Param("zero", "float", 0.0, min=0.0, max=0.0).describe()["min"] == 0.0  # a bound of 0 is shown


@pytest.mark.parametrize(("param", "value", "message"), [
    (KERNEL, [[1, "a"]], "f: kernel=[[1, 'a']] must contain numbers only (not booleans or strings)"),
    (KERNEL, [True, 1], "f: kernel=[True, 1] must contain numbers only (not booleans or strings)"),
    (KERNEL, np.zeros((2, 2, 2)), "f: kernel=<array 2x2x2 float64> must be a non-empty 2-D list of numbers"),
])
def test_more_refusals(param: Param, value: Any, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        param.coerce(value, "f")
    assert str(caught.value) == message


def test_transparent_is_a_colour() -> None:
    assert COLOR.coerce("transparent", "f") == (0.0, 0.0, 0.0, 0.0)
    assert COLOR.coerce(" Navy ", "f") == (0.0, 0.0, 128 / 255)


def test_kernel_files_quietly_refused_or_read(tmp_path: Path) -> None:
    """An empty file is refused as an empty kernel without a warning; a BOM and an upper-case suffix are read."""
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "bom.CSV").write_bytes(b"\xef\xbb\xbf1,2\n3,4\n")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "big.txt").write_bytes(b"0 " * (2 << 20) + b"0\n")
    np.save(tmp_path / "big.npy", np.zeros((256, 256)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParameterError, match=r"^f: kernel=\[\] must be a non-empty 2-D list of numbers$"):
            KERNEL.coerce("@empty.txt", "f", base_dir=tmp_path)
    assert KERNEL.coerce("@bom.CSV", "f", base_dir=tmp_path) == ((1.0, 2.0), (3.0, 4.0))
    for name, reason in [
        ("deep.json", "is not a kernel (maximum recursion depth exceeded while decoding a JSON array from a unicode "
                      "string)"),
        ("big.txt", "is 4194306 bytes, larger than the limit of 4 MiB"),
        ("big.npy", "holds 256x256 = 65536 values, more than 65025"),
    ]:
        with pytest.raises(ParameterError) as caught:
            KERNEL.coerce(f"@{name}", "f", base_dir=tmp_path)
        assert str(caught.value) == f"f: kernel file {tmp_path / name} {reason}"


@pytest.mark.parametrize("error", [ValueError(), RecursionError(" ")])
def test_a_kernel_error_without_a_message_is_named_by_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               error: Exception) -> None:
    """A reader's error with no text (a stand-in for the JSON decoder) is named by its type."""
    def failing(text: str) -> Any:
        raise error

    (tmp_path / "k.json").write_text("[[1]]")
    monkeypatch.setattr(params, "json_unique", failing)
    with pytest.raises(ParameterError) as caught:
        KERNEL.coerce("@k.json", "f", base_dir=tmp_path)
    assert str(caught.value) == f"f: kernel file {tmp_path / 'k.json'} is not a kernel ({type(error).__name__})"
