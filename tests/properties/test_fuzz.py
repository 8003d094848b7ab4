"""Bounded fuzzing (Hypothesis) of everything that takes user text or data.

* the filter-spec parser, on arbitrary text and on random specs built from the registry;
* the kernel parser (``Param`` kind ``kernel``);
* pipeline files: ``Pipeline.from_dict`` on random JSON-like data, ``Pipeline.load`` on
  random YAML text and bytes;
* every registered filter on random small images of every dtype and channel count, and
  random fused chains (lookup tables, colour matrices, warps);
* ``cvfilters.read`` on valid files of every format with random bytes damaged.

The contract: nothing raises but :class:`cvfilters.core.errors.UsageError` (a one-line
message; the CLI exits 2), and whatever parses round-trips losslessly. Examples are
fixed (``derandomize``) so CI does not flake on a new find; set
``CVFILTERS_FUZZ_RANDOM=1`` for fresh examples and ``CVFILTERS_FUZZ_SCALE=10`` for ten
times as many. Regressions found by fuzzing are tests at the end, and the random
strategies stay clear of them so the rest keeps fuzzing. ``EXAMPLES`` counts what ran.
"""

from __future__ import annotations

import json
import os
import string
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cvfilters as cvf
from cvfilters.backends.execution import info_of
from cvfilters.core.errors import ImageError, ParameterError, UsageError
from cvfilters.engine.pipeline import Pipeline
from cvfilters.io import reading
from cvfilters.registry.params import Param

ROOT = Path(__file__).resolve().parents[2]
SCALE = max(1, int(os.environ.get("CVFILTERS_FUZZ_SCALE", "1")))
EXAMPLES: Counter[str] = Counter()
FILTERS = cvf.list_filters()
NAMES = [f.name for f in FILTERS]
TEXT_KINDS = ("str", "pipeline")  # with kinds of files: only their declared examples are used


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples * SCALE, deadline=None, database=None,
                    derandomize=not os.environ.get("CVFILTERS_FUZZ_RANDOM"),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder relative ``@file`` values resolve against."""
    return tmp_path_factory.mktemp("fuzz")


def parse_or_usage(text: str | list[str], base_dir: Path) -> Pipeline | None:
    """Parse; None for a UsageError. Anything else propagates and fails the test."""
    try:
        return Pipeline.parse(text, base_dir=base_dir)
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)  # one line for the CLI
        return None


def assert_round_trips(pipe: Pipeline, base_dir: Path) -> None:
    if pipe.steps:  # an empty pipeline has no spec (and pipeline files refuse it)
        assert Pipeline.parse(pipe.to_spec(), base_dir=base_dir) == pipe, pipe.to_spec()
    data = pipe.to_dict()
    assert Pipeline.from_dict(data) == pipe
    assert Pipeline.from_dict(yaml.safe_load(yaml.safe_dump(data, sort_keys=False))) == pipe
    assert Pipeline.from_dict(json.loads(json.dumps(data))) == pipe


# ---------------------------------------------------------------- value strategies
def _finite(low: float | None, high: float | None) -> st.SearchStrategy[float]:
    return st.floats(low if low is not None else -1e6, high if high is not None else 1e6,
                     allow_nan=False, allow_infinity=False)


def _number_text(value: float) -> str:
    return repr(value) if not float(value).is_integer() else str(int(value))


def valid_value(param: Param) -> st.SearchStrategy[Any]:
    """Values within the declaration, as Python objects."""
    high = getattr(param, "large", None) or param.max
    if param.kind == "int":
        ints = st.integers(int(param.min if param.min is not None else -1000), int(high if high is not None else 1000))
        return ints.filter(lambda v: not param.odd or v % 2 == 1 or (v == 0 and param.min == 0))
    if param.kind == "float":
        return _finite(param.min, high)
    if param.kind == "bool":
        return st.booleans()
    if param.kind == "choice":
        return st.sampled_from(param.choices)
    if param.kind == "point":
        return st.tuples(_finite(param.min, param.max), _finite(param.min, param.max))
    if param.kind == "color":
        return st.lists(_finite(param.min, param.max), min_size=1, max_size=4).map(tuple)
    if param.kind == "kernel":
        return st.integers(1, 4).flatmap(lambda rows: st.lists(
            st.lists(_finite(-50, 50), min_size=rows, max_size=rows), min_size=1, max_size=4))
    return st.just(param.example if param.example is not None else param.default)  # str, path


def cli_text(value: Any) -> str:
    """How a user types a Python value in a spec (quoted when it holds , | or :)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(cli_text(v) for v in value) + "]"
    if isinstance(value, float):
        return _number_text(value)
    text = str(value)
    return f"'{text}'" if any(ch in text for ch in ",|:\"") and "'" not in text else text


ONE_LINE = string.printable.replace("\n", "").replace("\r", "").replace("\x0b", "").replace("\x0c", "")
JUNK = st.one_of(
    st.sampled_from(["", "nan", "inf", "-inf", "1e400", "-1e400", "0x10", "1_000", "[]", "[[]]", "[1,", "]", "@",
                     "@nope.txt", "@nope.json", "@../x.csv", "true", "None", "null", "[nan]", "[[1,2],[3]]",
                     "'", '"', "[1e400,0]", "9" * 400, "-" + "9" * 30, "1" + "0" * 5000, "[" * 30 + "]" * 30]),
    st.text(ONE_LINE, max_size=12),
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@st.composite
def spec_steps(draw: st.DrawFn) -> str:
    """A spec of 1-3 steps from the registry: mostly valid values, some junk, some unknown keys."""
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        flt = draw(st.sampled_from(FILTERS))
        parts = []
        for param in flt.params:
            if param.kind_record.files or param.kind in TEXT_KINDS:
                if param.required:
                    parts.append(f"{param.name}={cli_text(param.example)}")
                continue
            if param.required or draw(st.booleans()):
                junk = draw(st.integers(0, 9)) == 0
                parts.append(f"{param.name}={draw(JUNK) if junk else cli_text(draw(valid_value(param)))}")
        if draw(st.integers(0, 19)) == 0:
            parts.append(f"{draw(st.text(string.ascii_lowercase + '_', min_size=1, max_size=8))}=1")
        steps.append(flt.name + (":" + ",".join(draw(st.permutations(parts))) if parts else ""))
    return draw(st.sampled_from([" | ", "|", " |"])).join(steps)


SPEC_ALPHABET = st.sampled_from(list("abcdeghilnoprstuvwxz_:=,|[]()'\"@.-+0123456789eE \t\\/~*{}") + NAMES)


# ---------------------------------------------------------------- the spec parser
@fuzz(300)
@given(text=st.one_of(st.lists(SPEC_ALPHABET, max_size=30).map("".join), st.text(max_size=60)))
def test_spec_parser_on_arbitrary_text(workdir: Path, text: str) -> None:
    EXAMPLES["spec parser, arbitrary text"] += 1
    pipe = parse_or_usage(text, workdir)
    if pipe is not None:
        assert_round_trips(pipe, workdir)


@fuzz(300)
@given(spec=spec_steps())
def test_spec_parser_on_registry_specs(workdir: Path, spec: str) -> None:
    EXAMPLES["spec parser, registry specs"] += 1
    pipe = parse_or_usage(spec, workdir)
    if pipe is not None:
        assert_round_trips(pipe, workdir)


@fuzz(60)
@given(specs=st.lists(spec_steps(), min_size=0, max_size=3))
def test_repeated_f_options_equal_one_joined_spec(workdir: Path, specs: list[str]) -> None:
    """``-f A -f B`` is ``-f 'A | B'``."""
    EXAMPLES["spec parser, repeated -f"] += 1
    separate = parse_or_usage(specs, workdir)
    joined = parse_or_usage(" | ".join(specs), workdir) if specs else Pipeline()
    assert (separate is None) == (joined is None)
    assert separate == joined


# ---------------------------------------------------------------- the kernel parser
KERNEL = Param("kernel", "kernel", required=True, example=((0, 1, 0),))
SCALARS = st.one_of(st.floats(width=64), st.integers(-(2**62), 2**62), st.booleans(), st.none(),
                    st.text(max_size=4), st.just(float("nan")), st.just(1e308), st.just(-1e308))
NESTED = st.recursive(SCALARS, lambda children: st.lists(children, max_size=5), max_leaves=30)


def coerce_kernel(value: Any) -> tuple[tuple[float, ...], ...] | None:
    try:
        return KERNEL.coerce(value, "fuzz")
    except ParameterError as exc:
        assert str(exc).startswith("fuzz: kernel") and "\n" not in str(exc), str(exc)
        return None


@fuzz(300)
@given(value=st.one_of(NESTED, NESTED.map(lambda v: json.dumps(v)), st.text(max_size=40),
                       st.lists(st.lists(_finite(-1e300, 1e300), min_size=3, max_size=3), min_size=1, max_size=3)))
def test_kernel_parser(value: Any) -> None:
    EXAMPLES["kernel parser"] += 1
    kernel = coerce_kernel(value)
    if kernel is not None:
        array = np.asarray(kernel)
        assert array.ndim == 2 and array.size and np.isfinite(array).all()
        assert KERNEL.coerce(KERNEL.format(kernel), "fuzz") == kernel  # CLI text round trip
        assert KERNEL.coerce(KERNEL.to_json(kernel), "fuzz") == kernel  # pipeline-file round trip
        assert KERNEL.coerce(json.loads(json.dumps(KERNEL.to_json(kernel))), "fuzz") == kernel


@fuzz(20)
@given(rows=st.integers(1, 300), columns=st.integers(1, 300))
def test_kernel_size_limit(rows: int, columns: int) -> None:
    EXAMPLES["kernel parser, sizes"] += 1
    kernel = coerce_kernel(np.ones((rows, columns)).tolist())
    assert (kernel is not None) == (max(rows, columns) <= 255)


# ---------------------------------------------------------------- pipeline files
JSON_LIKE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**31), 2**31), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=20)


@st.composite
def pipeline_dicts(draw: st.DrawFn) -> Any:
    """Mostly the right shape, with random filters, parameters and values."""
    steps: list[Any] = []
    for _ in range(draw(st.integers(0, 3))):
        flt = draw(st.sampled_from(FILTERS))
        params: dict[Any, Any] = {}
        for param in flt.params:
            if param.kind_record.files or param.kind in TEXT_KINDS:
                if param.required:
                    params[param.name] = param.example
            elif param.required or draw(st.booleans()):
                params[param.name] = draw(valid_value(param) if draw(st.integers(0, 9)) else st.one_of(JSON_LIKE, JUNK))
        step: Any = {"filter": flt.name, "params": params}
        steps.append(step if draw(st.integers(0, 9)) else draw(JSON_LIKE))
    data: Any = {"version": draw(st.sampled_from([1] * 8 + [2, "1", None, True])), "steps": steps}
    return data if draw(st.integers(0, 9)) else draw(JSON_LIKE)


def from_dict_or_usage(data: Any) -> Pipeline | None:
    try:
        return Pipeline.from_dict(data)
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        return None


@fuzz(300)
@given(data=pipeline_dicts())
def test_pipeline_from_dict(workdir: Path, data: Any) -> None:
    EXAMPLES["pipeline files, from_dict"] += 1
    pipe = from_dict_or_usage(data)
    if pipe is not None:
        assert_round_trips(pipe, workdir)


YAML_TEXT = st.one_of(
    pipeline_dicts().map(lambda d: yaml.safe_dump(d, sort_keys=False)),
    st.lists(st.sampled_from(["version: 1\n", "steps:\n", "- filter: invert\n", "  - filter: gaussian_blur\n",
                              "    params: {sigma: 2}\n", "  params:\n", "    sigma: .inf\n", "&a [*a]\n", "*a\n",
                              "!!python/object:os.system\n", "steps: [", "{", "- \n", "\t", "%YAML 1.1\n---\n",
                              "version: !!binary aGk=\n", "? [1]\n: 2\n", "steps: !!set {a}\n"]),
             max_size=8).map("".join),
    st.text(max_size=80),
)


@fuzz(150)
@given(text=YAML_TEXT, suffix=st.sampled_from([".yaml", ".yml", ".json"]))
def test_pipeline_load_on_random_text(workdir: Path, text: str, suffix: str) -> None:
    EXAMPLES["pipeline files, load text"] += 1
    path = workdir / f"random{suffix}"
    path.write_text(text, encoding="utf-8")
    try:
        pipe = Pipeline.load(path)
    except UsageError as exc:
        assert "\n" not in str(exc), repr(exc)
        return
    if not any(p.kind_record.files for step in pipe.steps for p in step.filter.params):
        pipe.save(workdir / "again.yaml")  # files named in a loaded pipeline must be in its folder
        assert Pipeline.load(workdir / "again.yaml") == pipe
        pipe.save(workdir / "again.json")
        assert Pipeline.load(workdir / "again.json") == pipe


@fuzz(30)
@given(data=st.binary(max_size=200))
def test_pipeline_load_on_random_bytes(workdir: Path, data: bytes) -> None:
    EXAMPLES["pipeline files, load bytes"] += 1
    path = workdir / "bytes.yaml"
    path.write_bytes(data)
    try:
        Pipeline.load(path)
    except UsageError as exc:
        assert "\n" not in str(exc), repr(exc)


# ---------------------------------------------------------------- filters on random images
@st.composite
def images(draw: st.DrawFn) -> np.ndarray:
    height, width = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    channels = draw(st.sampled_from([1, 3, 4]))
    dtype = np.dtype(draw(st.sampled_from([np.uint8, np.uint16, np.float32])))
    shape = (height, width) if channels == 1 else (height, width, channels)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pattern = draw(st.sampled_from(["noise", "flat", "extremes"]))
    full = 1.0 if dtype.kind == "f" else np.iinfo(dtype).max
    if pattern == "flat":
        return np.full(shape, draw(st.sampled_from([0, full])), dtype)
    if pattern == "extremes":
        return (rng.integers(0, 2, shape) * full).astype(dtype)
    if dtype.kind == "f":
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, int(full), shape, dtype=dtype, endpoint=True)


@st.composite
def filter_params(draw: st.DrawFn, flt: cvf.Filter) -> dict[str, Any]:
    """Required examples, plus random in-range values for some numeric and choice parameters."""
    params = {p.name: p.example for p in flt.params if p.required}
    for param in flt.params:
        numeric = param.kind in ("int", "float", "bool", "choice", "point", "color")
        if numeric and not param.required and draw(st.booleans()):
            params[param.name] = draw(valid_value(param))
    return params


def _filter_cases() -> list[Any]:
    return [pytest.param(name, id=name) for name in NAMES]


@pytest.mark.parametrize("name", _filter_cases())
@fuzz(4)
@given(data=st.data())
def test_filter_on_random_images(name: str, data: st.DataObject) -> None:
    flt = cvf.get_filter(name)
    image = data.draw(images(), label="image")
    params = data.draw(filter_params(flt), label="params")
    try:
        flt.resolve(params)
    except ParameterError:
        assume(False)  # a cross-parameter check refused the combination
    EXAMPLES["filters on random images"] += 1
    try:
        out = cvf.apply(image, name, backend="cpu", **params)
    except ParameterError as exc:  # a region that does not fit this image (crop:x=..): refused, naming it
        assume("is outside the image" not in str(exc))
        raise
    want = flt.output_info(flt.resolve(params), info_of(image))  # the size changes with rotate:expand=true
    assert out.shape == ((want.height, want.width) if want.channels == 1 else (want.height, want.width, want.channels))
    assert out.dtype == want.dtype == image.dtype
    if out.dtype.kind == "f":
        assert not np.isnan(out).any()


def _fusable(kind: str) -> list[str]:
    from cvfilters.engine.fusion import kind_of

    return [f.name for f in FILTERS if kind_of(f) == kind]


FUSABLE = {kind: _fusable(kind) for kind in ("table", "matrix", "warp")}


@fuzz(60)
@given(data=st.data())
def test_fused_chains_on_random_images(data: st.DataObject) -> None:
    """Random chains of point operations, colour matrices and warps run fused: shape and dtype
    kept; chains of lookup tables equal the unfused steps exactly on integer images."""
    kind = data.draw(st.sampled_from(sorted(k for k, names in FUSABLE.items() if names)), label="kind")
    names = data.draw(st.lists(st.sampled_from(FUSABLE[kind]), min_size=2, max_size=4), label="chain")
    image = data.draw(images(), label="image")
    steps = []
    for name in names:
        flt = cvf.get_filter(name)
        params = data.draw(filter_params(flt), label=name)
        try:
            flt.resolve(params)
        except ParameterError:
            assume(False)
        steps.append((name, params))
    EXAMPLES["fused chains on random images"] += 1
    fused = Pipeline(steps)(image, backend="cpu")
    unfused = Pipeline(steps, fuse=False)(image, backend="cpu")
    assert fused.shape == unfused.shape and fused.dtype == image.dtype  # rotate:expand=true changes the size
    if kind == "table" and image.dtype.kind == "u":
        np.testing.assert_array_equal(fused, unfused)


# ---------------------------------------------------------------- image files with damaged bytes
def _seed_files() -> dict[str, bytes]:
    rng = np.random.default_rng(5)
    colour, gray16 = rng.integers(0, 256, (20, 30, 3), dtype=np.uint8), rng.integers(0, 65536, (20, 30), np.uint16)
    seeds = {}
    for ext, image in ((".png", gray16), (".png", colour), (".jpg", colour), (".tif", gray16), (".webp", colour),
                       (".bmp", colour), (".gif", colour), (".ppm", colour), (".pgm", gray16),
                       (".hdr", colour.astype(np.float32) / 255), (".jp2", np.zeros((64, 64, 3), np.uint8)),
                       (".avif", colour)):
        ok, data = cv2.imencode(ext, image)
        if ok:
            seeds[f"{ext[1:]}{image.ndim}{image.dtype.itemsize}{ext}"] = data.tobytes()
    return seeds


SEEDS = _seed_files()
CORRUPTIONS = st.sampled_from([b"\xff", b"\x00", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00",
                               b"\xff\xd9", b"IEND", b"\x00" * 16])


@fuzz(200)
@given(data=st.data())
def test_read_on_damaged_files(workdir: Path, capfd: pytest.CaptureFixture[str], data: st.DataObject) -> None:
    """Random overwrites, deletions and insertions in valid files of every format: ``read``
    returns a supported image or raises an ImageError, and nothing reaches stderr (libpng and
    libjpeg print there; cvfilters.io.reading catches it)."""
    name = data.draw(st.sampled_from(sorted(SEEDS)), label="seed")
    raw = bytearray(SEEDS[name])
    for _ in range(data.draw(st.integers(1, 6), label="edits")):
        at = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["overwrite", "delete", "insert", "cut"]))
        if action == "overwrite":
            chunk = data.draw(st.one_of(CORRUPTIONS, st.binary(min_size=1, max_size=4)))
            raw[at : at + len(chunk)] = chunk
        elif action == "delete":
            del raw[at : at + data.draw(st.integers(1, 64))]
        elif action == "insert":
            raw[at:at] = data.draw(st.one_of(CORRUPTIONS, st.binary(min_size=1, max_size=32)))
        else:
            del raw[at:]
        if not raw:
            raw = bytearray(b"\0")
    path = workdir / f"damaged.{name.rsplit('.', 1)[1]}"
    path.write_bytes(bytes(raw))
    EXAMPLES["read on damaged files"] += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            image = reading.read(path)
        except ImageError as exc:
            assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc), str(exc)
        else:
            assert image.dtype in (np.uint8, np.uint16, np.float32) and image.ndim in (2, 3) and image.size
            assert image.ndim == 2 or image.shape[2] in (3, 4)
    for warning in caught:  # what the decoder printed about a file it still decoded
        assert warning.category is reading.CorruptDataWarning and str(warning.message).startswith(f"{path}: ")
    assert capfd.readouterr().err == ""


# ---------------------------------------------------------------- regressions found by fuzzing
BIG = 10**400  # an integer no float holds: JSON, YAML and Python give it as int


@pytest.mark.parametrize("spec", [
    "convolve:kernel=[[1" + "0" * 400 + "]]",
    "vignette:center=[1" + "0" * 400 + ",0]",
    "affine:fill=[1" + "0" * 400 + "]",
], ids=["kernel", "point", "color"])
def test_huge_integers_in_lists_from_the_cli(workdir: Path, spec: str) -> None:
    parse_or_usage(spec, workdir)


def test_huge_integer_for_a_float_parameter() -> None:
    from_dict_or_usage({"version": 1, "steps": [{"filter": "vignette", "params": {"radius": BIG}}]})


def test_deeply_nested_kernel_text(workdir: Path) -> None:
    parse_or_usage("convolve:kernel=" + "[" * 5000 + "]" * 5000, workdir)


def test_error_message_with_a_newline_in_the_value(workdir: Path) -> None:
    with pytest.raises(ParameterError) as caught:
        Pipeline.parse("pixellate:size=1\n2", base_dir=workdir)
    assert "\n" not in str(caught.value)


def test_empty_pipeline_file_is_refused() -> None:
    with pytest.raises(UsageError, match="non-empty"):
        Pipeline.from_dict({"version": 1, "steps": []})
    with pytest.raises(UsageError, match="version must be 1"):
        Pipeline.from_dict({"version": True, "steps": [{"filter": "invert"}]})


@pytest.mark.parametrize("order", ["lut-first", "lut-second"])
def test_3d_lut_next_to_a_point_operation(order: str) -> None:
    """Found by the fused-chain fuzz (a 3-D .cube's table was None inside a fused group)."""
    steps = [("lut", {"file": str(ROOT / "fixtures" / "warm.cube")}), ("invert", {})]
    steps = steps if order == "lut-first" else steps[::-1]
    image = np.random.default_rng(3).integers(0, 256, (4, 4, 3), dtype=np.uint8)
    fused, unfused = Pipeline(steps)(image, backend="cpu"), Pipeline(steps, fuse=False)(image, backend="cpu")
    np.testing.assert_array_equal(fused, unfused)


# --- the command line on random pipeline files and values (issue 24) ---------------------
def run_cli_here(args: list[str]) -> tuple[int, str, str]:
    """``cvfilters ARGS`` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from cvfilters.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("default")
        code = main(args)
    return code, out.getvalue(), err.getvalue()


CLI_FILES = st.one_of(
    YAML_TEXT.map(lambda text: ("yaml", text)),
    pipeline_dicts().map(lambda d: ("json", json.dumps(d))),
    st.lists(spec_steps(), min_size=1, max_size=2).map(lambda specs: ("specs", "\n".join(specs))),
)


@fuzz(60)
@given(case=CLI_FILES)
def test_cli_on_random_pipelines(workdir: Path, case: tuple[str, str]) -> None:
    """Exit 0, 1 or 2 only; one line per error, no traceback, no internal error; nothing written on exit 2."""
    EXAMPLES["cli runs"] += 1
    kind, text = case
    source = workdir / "cli-in.png"
    if not source.exists():
        cv2.imwrite(str(source), np.random.default_rng(1).integers(0, 256, (9, 7, 3), dtype=np.uint8))
    out = workdir / f"cli-out-{EXAMPLES['cli runs']}"
    out.mkdir()
    args = ["apply", str(source), "-o", str(out / "r.png"), "--backend", "cpu"]
    if kind == "specs":
        for spec in text.split("\n"):
            args += ["-f", spec]
    else:
        path = workdir / f"cli-pipeline.{kind}"
        path.write_text(text, encoding="utf-8")
        args += ["-p", str(path)]
    code, stdout, stderr = run_cli_here(args)
    assert code in (0, 1, 2), (code, stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) <= 1 and all(line.startswith(("error: ", "warning: ")) for line in stderr.splitlines()), \
        stderr
    if code != 0:
        assert len(errors) == 1 and not stdout and not any(out.iterdir()), (code, stderr)


def test_fuzz_counts() -> None:
    """For the closing note of issue #9 (shown with ``pytest -s``); runs last in this module."""
    total = sum(EXAMPLES.values())
    print(f"\nfuzz examples run: {total} " + ", ".join(f"{k}: {v}" for k, v in sorted(EXAMPLES.items())))
    if EXAMPLES:  # empty when this test runs alone (-k)
        assert total >= 1000
