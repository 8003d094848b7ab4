"""The filter text grammar (cvfilters.engine.spec) called directly: sequences, @file values, quoting.

Every expected message and value is written out by hand from the grammar in the module's
docstring and the parameter declarations (``gaussian_blur``: sigma a number in [0.1, 100];
``pixellate``: size an integer); the kernel files are written by the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cvfilters.core.errors import ParameterError, UnknownFilterError
from cvfilters.engine.spec import parse_spec, split_spec

OUTSIDE = "is outside the pipeline file's folder; files named in a pipeline file must be inside its folder"


def names_and_params(spec: str | Sequence[str], **kwargs: Any) -> list[tuple[str, dict[str, Any]]]:
    """Each step's filter name and parameters; ``kwargs`` passed on only where given (defaults tested)."""
    return [(step.filter.name, step.params) for step in parse_spec(spec, **kwargs)]


@pytest.mark.parametrize(("text", "parts"), [
    ("k=XL,m=X", ["k=XL", "m=X"]),  # letters are plain text: only ' " open quotes, [ ( and ] ) nest
    ("k=<a>,m={b}", ["k=<a>", "m={b}"]),
    ("k=(X,Y),m=[x]", ["k=(X,Y)", "m=[x]"]),
])
def test_only_quotes_and_brackets_hold_separators(text: str, parts: list[str]) -> None:
    assert split_spec(text, ",") == parts


def test_a_sequence_of_spec_strings_is_every_step_in_order() -> None:
    steps = names_and_params(["gaussian_blur:sigma=3 | invert", "pixellate:size=4"])
    assert [name for name, _ in steps] == ["gaussian_blur", "invert", "pixellate"]
    assert steps[0][1]["sigma"] == 3.0 and steps[2][1]["size"] == 4
    assert names_and_params(("invert",)) == names_and_params("invert")


def test_file_values_are_read_from_base_dir(tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("0 1 0\n")
    ((_, params),) = names_and_params("convolve:kernel=@k.txt", base_dir=tmp_path)
    assert params["kernel"] == ((0.0, 1.0, 0.0),)
    ((_, params),) = names_and_params(["invert", "convolve:kernel=@k.txt"], base_dir=str(tmp_path))[1:]
    assert params["kernel"] == ((0.0, 1.0, 0.0),)


def test_files_leave_base_dir_unless_confined(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "k.txt").write_text("1 2\n")
    (tmp_path / "sub" / "k.txt").write_text("3 4\n")
    absolute = tmp_path / "k.txt"
    # not confined (the default): ../ and absolute names are read
    assert names_and_params("convolve:kernel=@../k.txt", base_dir=tmp_path / "sub")[0][1]["kernel"] == ((1.0, 2.0),)
    assert names_and_params(f"convolve:kernel=@{absolute}")[0][1]["kernel"] == ((1.0, 2.0),)
    # confined (a pipeline file's rule): only names inside base_dir
    inside = names_and_params("convolve:kernel=@k.txt", base_dir=tmp_path / "sub", confine=True)
    assert inside[0][1]["kernel"] == ((3.0, 4.0),)
    for name in ("../k.txt", str(absolute)):
        with pytest.raises(ParameterError) as caught:
            parse_spec(f"invert | convolve:kernel=@{name}", base_dir=tmp_path / "sub", confine=True)
        assert str(caught.value) == f"convolve: kernel file {name!r} {OUTSIDE}"


@pytest.mark.parametrize(("spec", "message"), [
    ("gaussian_blur:sigma=", "gaussian_blur: sigma= must be a number"),
    ("gaussian_blur:sigma=''", "gaussian_blur: sigma= must be a number"),  # quotes around nothing: empty
    ('gaussian_blur:sigma=""', "gaussian_blur: sigma= must be a number"),
    ("gaussian_blur:sigma='3'x", "gaussian_blur: sigma='3'x must be a number"),  # quotes only around a whole value
    ("gaussian_blur:sigma=X3X", "gaussian_blur: sigma=X3X must be a number"),
    ("gaussian_blur:sigma=3 foo", "gaussian_blur: sigma=3 foo must be a number"),  # foo is no filter: no hint
    ("gaussian_blur:sigma=0.05", "gaussian_blur: sigma=0.05 is outside [0.1, 100]"),
    ("gaussian_blur:sigma=1e9", "gaussian_blur: sigma=1e9 is outside [0.1, 100]"),
    ("pixellate:size=2.5", "pixellate: size=2.5 must be an integer"),
    ("flip:axis=sideways", "flip: axis=sideways is not one of horizontal, vertical, both"),
    ("gaussian_blur:sigmaa=2", "gaussian_blur: sigmaa is not a parameter of gaussian_blur (did you mean 'sigma'? "
                               "parameters: sigma, ksize, border)"),
])
def test_value_errors_name_the_filter_and_parameter(spec: str, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        parse_spec(spec)
    assert str(caught.value) == message


@pytest.mark.parametrize(("spec", "sigma"), [
    ("gaussian_blur:sigma='3'", 3.0), ('gaussian_blur:sigma="0.5"', 0.5), ("gaussian_blur:sigma= 1e1 ", 10.0),
    ("gaussian_blur:sigma=100", 100.0), ("gaussian_blur:sigma=0.1", 0.1),
])
def test_numbers_quoted_or_not_and_the_range_ends(spec: str, sigma: float) -> None:
    assert names_and_params(spec)[0][1]["sigma"] == sigma


@pytest.mark.parametrize(("spec", "error", "message"), [
    ("gaussian_blur:sigma=3, border=wrap pixellate:size=4", ParameterError,
     "gaussian_blur: border=wrap pixellate:size=4 is not one of reflect101, replicate, reflect, wrap, constant; "
     "steps are separated by '|': did you mean 'gaussian_blur:sigma=3, border=wrap | pixellate:size=4'?"),
    ("invert gaussian_blur:sigma=3, border=wrap", UnknownFilterError,
     "unknown filter 'invert gaussian_blur' (did you mean gaussian_blur?); `cvfilters list` shows them all; "
     "steps are separated by '|': did you mean 'invert | gaussian_blur:sigma=3, border=wrap'?"),
])
def test_the_missing_bar_hint_keeps_every_word(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        parse_spec(spec)
    assert str(caught.value) == message
