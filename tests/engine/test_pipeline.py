"""Pipeline parsing, files, running, residency and user-registered filters."""

from __future__ import annotations

import threading
import types

import cv2
import numpy as np
import pytest

import cvfilters as cvf
from cvfilters.core.errors import (
    BackendUnavailableError,
    InvalidImageError,
    ParameterError,
    SpecError,
    UnknownFilterError,
    UsageError,
)
from cvfilters.engine.pipeline import Pipeline
from cvfilters.registry import catalog as registry
from cvfilters.registry.params import Param
from tests.conftest import FIXTURES, photo


def test_parse_forms_agree() -> None:
    one = Pipeline.parse("gaussian_blur:sigma=3 | pixellate:size=8")
    assert Pipeline.parse(["gaussian_blur:sigma=3", "pixellate:size=8"]) == one
    assert Pipeline([("gaussian_blur", {"sigma": 3}), ("pixellate", {"size": "8"})]) == one
    assert [s.filter.name for s in one.steps] == ["gaussian_blur", "pixellate"]
    assert one.steps[0].params == {"sigma": 3.0, "ksize": 0, "border": "reflect101"}
    assert one.to_spec() == "gaussian_blur:sigma=3 | pixellate"


def test_parse_lists_quotes_and_files(tmp_path) -> None:
    pipe = Pipeline.parse("convolve:kernel=[[0,-1,0],[-1,5,-1],[0,-1,0]],bias=0.5 | vignette:center=[0.25,0.75]")
    assert pipe.steps[0].params["kernel"] == ((0, -1, 0), (-1, 5, -1), (0, -1, 0))
    assert pipe.steps[1].params["center"] == (0.25, 0.75)
    assert Pipeline.parse("flip:axis='vertical'").steps[0].params["axis"] == "vertical"
    from_file = Pipeline.parse(f"convolve:kernel=@{FIXTURES / 'sharpen.csv'}")
    assert from_file.steps[0].params["kernel"] == pipe.steps[0].params["kernel"]
    np.save(tmp_path / "k.npy", np.eye(3))
    (tmp_path / "k.json").write_text("[[1, 0], [0, 1]]")
    (tmp_path / "k.txt").write_text("1 2 3\n4 5 6\n")
    assert Pipeline.parse("convolve:kernel=@k.npy", base_dir=tmp_path).steps[0].params["kernel"][0] == (1, 0, 0)
    assert Pipeline.parse("convolve:kernel=@k.json", base_dir=tmp_path).steps[0].params["kernel"] == ((1, 0), (0, 1))
    assert Pipeline.parse("convolve:kernel=@k.txt", base_dir=tmp_path).steps[0].params["kernel"][1] == (4, 5, 6)


@pytest.mark.parametrize(("spec", "error", "message"), [
    ("gausian_blur", UnknownFilterError, "did you mean gaussian_blur"),
    ("gaussian_blur:sigma", SpecError, "expected key=value"),
    ("gaussian_blur:sigma=1,sigma=2", SpecError, "sigma is given twice"),
    ("gaussian_blur | | invert", SpecError, "empty filter step"),
    ("convolve:kernel=[[1,2]", SpecError, "unbalanced brackets"),
    ("convolve:kernel=[[1,2],[3]]", ParameterError, "rectangular"),
    ("convolve:kernel=@missing.csv", ParameterError, "cannot be read"),
    ("convolve:kernel=@kernel.png", ParameterError, "must end in one of"),
    ("flip:axis=diagonal", ParameterError, "flip: axis=diagonal is not one of horizontal, vertical, both"),
    ("sobel:dx=0,dy=0", ParameterError, "dx + dy must be at least 1"),
    ("convolve:kernel=[[1,-1]],normalize=true", ParameterError, "sum to 0"),
    ("pixellate:size=2.5", ParameterError, "pixellate: size=2.5 must be an integer"),
    ("gaussian_blur:sigma=1e400", ParameterError, "finite"),
])
def test_bad_specs_name_the_problem(spec: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message.replace("[", r"\[").replace("+", r"\+")):
        Pipeline.parse(spec)
    assert issubclass(error, UsageError)


def test_pipeline_file_errors(tmp_path) -> None:
    cases = {
        "steps: []": "version must be 1",
        "version: 1\nsteps: 3": "'steps' must be a non-empty list",
        "version: 1\nsteps: []": "'steps' must be a non-empty list",
        "version: 1\nsteps: [{filter: invert, extra: 1}]": "step 1: unknown key 'extra'",
        "version: 1\nsteps: [3]": "step 1 must be a mapping",
        "version: 1\nsteps: []\nmore: 1": "unknown key 'more'",
        "version: 1\nsteps: [{filter: invert, params: {x: 1}}]": "x is not a parameter",
        "version: 1\nsteps: [{filter: !!python/object:os.system {}}]": "not a valid pipeline file",
        "{": "not a valid pipeline file",
    }
    for i, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"p{i}.yaml"
        path.write_text(text)
        with pytest.raises(UsageError, match=message):
            Pipeline.load(path)
    with pytest.raises(SpecError, match="pipeline file cannot be read"):
        Pipeline.load(tmp_path / "absent.yaml")


def test_pipeline_file_reads_kernels_relative_to_itself(tmp_path) -> None:
    (tmp_path / "edge.csv").write_text("-1,0,1\n-2,0,2\n-1,0,1\n")
    (tmp_path / "p.yaml").write_text("version: 1\nsteps:\n  - filter: convolve\n    params: {kernel: '@edge.csv'}\n")
    assert Pipeline.load(tmp_path / "p.yaml").steps[0].params["kernel"][1] == (-2, 0, 2)


def test_steps_run_in_order_and_equal_manual_chaining() -> None:
    image = photo(30, 42, 3, np.uint8)  # 42 is not a multiple of 4: pixellate and flip do not commute
    chained = cvf.apply(cvf.apply(image, "gaussian_blur", sigma=2), "pixellate", size=4)
    np.testing.assert_array_equal(Pipeline.parse("gaussian_blur:sigma=2 | pixellate:size=4")(image), chained)
    flipped_first = Pipeline.parse("flip | pixellate:size=4")(image)
    assert not np.array_equal(flipped_first, Pipeline.parse("pixellate:size=4 | flip")(image))


def test_opencl_chain_uploads_once_and_keeps_input_type(device_backend: str) -> None:
    image = photo(64, 64, 3, np.uint8)
    pipe = Pipeline.parse("gaussian_blur:sigma=2 | sobel | invert | vignette | pixellate:size=4")
    out, report = pipe.run(image, backend=device_backend)
    assert isinstance(out, np.ndarray) and out.shape == image.shape
    assert (report.counters.uploads, report.counters.downloads) == (1, 1)
    assert not report.counters.fallbacks
    assert report.backend == device_backend
    if device_backend == "opencl":
        device_out, device_report = pipe.run(cv2.UMat(image), backend="auto")
        assert isinstance(device_out, cv2.UMat)
        assert device_report.counters.uploads == 0 and device_report.counters.downloads == 0
        np.testing.assert_array_equal(device_out.get(), out)


def test_cpu_run_makes_no_transfers_and_explains_itself() -> None:
    out, report = Pipeline.parse("invert")(photo(), backend="cpu"), Pipeline.parse("invert").run(photo())[1]
    assert out.dtype == np.uint8
    assert report.backend == "cpu" and report.counters.uploads == 0
    text = "\n".join(report.lines())
    assert "backend: cpu" in text and "step 1: invert" in text and "host fallbacks: none" in text


def test_auto_stays_on_cpu_for_small_images_and_never_picks_a_cpu_opencl_device() -> None:
    assert Pipeline.parse("invert").run(photo(8, 8))[1].backend == "cpu"
    big = np.zeros((600, 600, 3), np.uint8)
    status = cvf.backend_availability("opencl")
    chosen = Pipeline.parse("invert").run(big)[1].backend
    if not status.is_gpu and not cvf.backend_availability("cuda").available:
        assert chosen == "cpu"


def test_auto_keeps_point_only_work_on_cpu_without_asking_the_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    import cvfilters.backends as backends

    asked: list[str] = []
    gpu = backends.Availability("opencl", True, "a GPU", is_gpu=True)

    def availability(name: str) -> backends.Availability:
        asked.append(name)
        return gpu if name == "opencl" else backends.Availability(name, name == "cpu")

    monkeypatch.setattr(backends, "availability", availability)
    monkeypatch.setattr(backends, "get_backend", lambda name: name)
    big = np.zeros((512, 512, 3), np.uint8)
    assert backends.select("auto", big, 512 * 512, point_only=True) == "cpu" and asked == []
    assert backends.select("auto", big, 512 * 512) == "opencl" and asked == ["cuda", "opencl"]
    assert backends.select("auto", big[:511], 511 * 512) == "cpu"
    # Every step a point operation (a fused colour group too) is point-only; one blur is not.
    assert all(step.filter.point_only for step in Pipeline.parse("invert | grayscale | gamma").compile())
    assert not all(step.filter.point_only for step in Pipeline.parse("invert | gaussian_blur").compile())
    assert not cvf.get_filter("vignette").point_only  # positional: depends on where the pixel is


def test_unavailable_backend_is_an_error_not_a_fallback() -> None:
    if cvf.backend_availability("cuda").available:
        pytest.skip("CUDA is available here")
    with pytest.raises(BackendUnavailableError, match="backend 'cuda' is unavailable: .+"):
        cvf.apply(photo(), "invert", backend="cuda")
    with pytest.raises(UsageError, match="unknown backend 'gpu'"):
        cvf.apply(photo(), "invert", backend="gpu")


@pytest.mark.parametrize(("image", "message"), [
    (np.zeros((4, 4), np.int32), "dtype int32 is not supported"),
    (np.zeros((4, 4, 5), np.uint8), "is not H x W"),
    (np.zeros((0, 4), np.uint8), "empty"),
    ([[1, 2]], "expected a numpy array"),
])
def test_invalid_images_rejected(image, message: str) -> None:
    with pytest.raises(InvalidImageError, match=message):
        cvf.apply(image, "invert")


def test_trailing_single_channel_axis_is_kept() -> None:
    image = photo(10, 10, 1, np.uint8)[:, :, None]
    assert cvf.apply(image, "gaussian_blur").shape == (10, 10, 1)


@pytest.fixture
def swap_rb_name():
    yield "test_swap_rb"
    registry.unregister("test_swap_rb")


def test_user_registered_filter_works_everywhere(swap_rb_name: str) -> None:
    @cvf.register("test_swap_rb", category="color", summary="Swap blue and red.",
                  params=[Param("keep_green", "bool", True, help="keep green")], replace=True)
    def swap_rb(ctx, img, *, keep_green):
        b, g, r = ctx.backend.split(img)
        return ctx.backend.merge([r, g if keep_green else ctx.backend.convert(g, ctx.info.dtype, 0.0), b])

    image = photo(8, 8, 3, np.uint8)
    np.testing.assert_array_equal(cvf.apply(image, "test_swap_rb"), image[..., ::-1])
    np.testing.assert_array_equal(swap_rb(image), image[..., ::-1])
    out = Pipeline.parse("test_swap_rb:keep_green=false")(image)
    assert out[..., 1].max() == 0
    with_alpha = photo(8, 8, 4, np.uint8)
    np.testing.assert_array_equal(cvf.apply(with_alpha, swap_rb)[..., 3], with_alpha[..., 3])
    assert "test_swap_rb" in [f.name for f in cvf.list_filters("color")]
    with pytest.raises(ValueError, match="registered already"):
        cvf.register("test_swap_rb", category="color", summary="again")(swap_rb.fn)
    with pytest.raises(ValueError, match="category"):
        cvf.register("test_bad", category="nope", summary="x")(swap_rb.fn)


def test_pipeline_files_only_read_files_inside_their_folder(tmp_path) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_text("1,2\n3,4\n")
    folder = tmp_path / "pipes"
    folder.mkdir()
    (folder / "ok.csv").write_text("1\n")
    (folder / "link.csv").symlink_to(outside)
    allowed = folder / "ok.yaml"
    allowed.write_text("version: 1\nsteps: [{filter: convolve, params: {kernel: '@ok.csv'}}]\n")
    assert Pipeline.load(allowed).steps[0].params["kernel"] == ((1.0,),)
    for name in ("../secret.csv", str(outside), "~/secret.csv", "link.csv"):
        (folder / "bad.yaml").write_text(f"version: 1\nsteps: [{{filter: convolve, params: {{kernel: '@{name}'}}}}]\n")
        with pytest.raises(ParameterError, match="outside the pipeline file's folder"):
            Pipeline.load(folder / "bad.yaml")
    # the same spec typed by the user on the command line may name any file
    assert Pipeline.parse(f"convolve:kernel=@{outside}").steps[0].params["kernel"][1] == (3.0, 4.0)


def test_yaml_aliases_and_huge_files_are_refused(tmp_path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [1, 1]\nb: &b [*a, *a]\nversion: 1\nsteps: [{filter: convolve, params: {kernel: *b}}]\n")
    with pytest.raises(SpecError, match="aliases"):
        Pipeline.load(bomb)
    big = tmp_path / "big.yaml"
    big.write_text("version: 1\n" + "#" * (2 * 1024 * 1024))
    with pytest.raises(SpecError, match="larger than"):
        Pipeline.load(big)


def test_large_values_need_allow_large() -> None:
    param = Param("iterations", "int", 1, min=1, max=1000, large=50, help="passes")
    assert param.coerce("50", "demo") == 50
    with pytest.raises(ParameterError, match="demo: iterations=51 is above 50 .* --allow-large .* up to 1000"):
        param.coerce("51", "demo")
    with cvf.allow_large():
        assert param.coerce("1000", "demo") == 1000
        with pytest.raises(ParameterError, match="outside"):
            param.coerce("1001", "demo")
    with pytest.raises(ParameterError):
        param.coerce(51, "demo")  # the permission ends with the block


def test_null_values_are_refused_unless_the_default_is_automatic() -> None:
    with pytest.raises(ParameterError, match="gaussian_blur: sigma has no value"):
        Pipeline.from_dict({"version": 1, "steps": [{"filter": "gaussian_blur", "params": {"sigma": None}}]})
    assert cvf.get_filter("blend").resolve({"source": None})["source"] is None  # None is its default


def _steps_file(path, *steps: str) -> None:
    path.write_text("version: 1\nsteps:\n" + "".join(f"  - {step}\n" for step in steps))


def test_load_counts_every_files_steps_towards_256_in_all(tmp_path) -> None:
    _steps_file(tmp_path / "flat256.yaml", *["{filter: invert}"] * 256)
    assert len(Pipeline.load(tmp_path / "flat256.yaml")) == 256
    _steps_file(tmp_path / "flat257.yaml", *["{filter: invert}"] * 257)
    with pytest.raises(SpecError, match=r"flat257\.yaml: the pipeline files it names expand to more than 256 steps"):
        Pipeline.load(tmp_path / "flat257.yaml")
    # One step naming a file of 256: 257 in all, the outer file's own step counted too.
    nested = "{filter: masked, params: {filter: '@flat256.yaml', mask: 'ellipse:0.5,0.5,0.3,0.4'}}"
    _steps_file(tmp_path / "outer.yaml", nested)
    with pytest.raises(ParameterError, match=r"masked: filter has a bad step: .*flat256\.yaml: .* more than 256 steps"):
        Pipeline.load(tmp_path / "outer.yaml")
    _steps_file(tmp_path / "flat255.yaml", *["{filter: invert}"] * 255)
    _steps_file(tmp_path / "outer.yaml", nested.replace("flat256", "flat255"))
    assert len(Pipeline.load(tmp_path / "outer.yaml")) == 1
    # A file whose steps are not a list adds none: at 256 it fails for its own fault, not the bound.
    (tmp_path / "bad.yaml").write_text("version: 1\nsteps: 3\n")
    _steps_file(tmp_path / "outer.yaml", *["{filter: invert}"] * 255, nested.replace("flat256", "bad"))
    with pytest.raises(ParameterError, match=r"bad\.yaml:2: 'steps' must be a non-empty list"):
        Pipeline.load(tmp_path / "outer.yaml")


def test_pipelines_equal_only_pipelines_of_the_same_steps() -> None:
    pipe = Pipeline.parse("gaussian_blur:sigma=3 | invert")
    assert pipe == Pipeline([("gaussian_blur", {"sigma": 3.0}), ("invert", {})])
    assert pipe != Pipeline.parse("gaussian_blur:sigma=2 | invert")
    assert pipe != Pipeline.parse("invert | gaussian_blur:sigma=3")
    assert (pipe == "gaussian_blur:sigma=3 | invert") is False
    look_alike = types.SimpleNamespace(steps=list(pipe.steps))  # the same steps, not a Pipeline
    assert (pipe == look_alike) is False


def test_calling_a_pipeline_passes_backend_and_layout() -> None:
    pipe = Pipeline.parse("flip:axis=horizontal | grayscale")
    with pytest.raises(UsageError, match="unknown backend 'bogus'"):
        pipe(photo(8, 8, 3, np.uint8), backend="bogus")
    chw = np.ascontiguousarray(photo(6, 10, 3, np.uint8).transpose(2, 0, 1))  # 3 x 6 x 10
    gray = cv2.cvtColor(cv2.flip(np.ascontiguousarray(chw.transpose(1, 2, 0)), 1), cv2.COLOR_BGR2GRAY)
    out = pipe(chw, backend="cpu", layout="chw")
    assert out.shape == (3, 6, 10)
    for channel in out:
        np.testing.assert_array_equal(channel, gray)  # exact: both are cv2's own flip and cvtColor


@pytest.fixture
def thread_probe():
    seen: list[tuple[str, int]] = []

    @cvf.register("test_thread_probe", category="color", summary="Record the thread.", replace=True)
    def probe(ctx, img):
        seen.append((threading.current_thread().name, cv2.getNumThreads()))
        return img

    yield seen
    registry.unregister("test_thread_probe")


def test_map_runs_on_the_threads_asked_for(thread_probe: list[tuple[str, int]]) -> None:
    images = [photo(8, 8, 3, np.uint8) for _ in range(4)]
    Pipeline.parse("test_thread_probe").map(images, workers=1, backend="cpu")
    assert {name for name, _ in thread_probe} == {threading.current_thread().name}
    thread_probe.clear()
    # Two workers on four small images: the first alone, the rest on the pool's threads, where
    # OpenCV's own pool is one thread (workers=None would run so small a batch serially).
    Pipeline.parse("test_thread_probe").map(images, workers=2, backend="cpu")
    assert thread_probe[0][0] == threading.current_thread().name
    assert all(name.startswith("cvfilters-map") and threads == 1 for name, threads in thread_probe[1:])


def test_map_takes_the_channel_order_it_is_given() -> None:
    images = [photo(8, 8, 3, np.uint8), photo(8, 8, 3, np.uint8)[::-1].copy()]
    for order, code in (("rgb", cv2.COLOR_RGB2GRAY), ("bgr", cv2.COLOR_BGR2GRAY)):
        for image, out in zip(images, Pipeline.parse("grayscale").map(images, workers=1, channel_order=order),
                              strict=True):
            want = cv2.cvtColor(image, code)
            for channel in range(3):
                np.testing.assert_array_equal(out[..., channel], want)  # exact: cv2's cvtColor both


def test_compile_is_cached_until_the_steps_change() -> None:
    pipe = Pipeline.parse("gamma:gamma=2 | invert | gaussian_blur:sigma=1")
    first = pipe.compile()
    assert [s.filter.name for s in first] == ["fused[gamma:gamma=2 | invert]", "gaussian_blur"]
    assert pipe.compile() is first  # one plan while the steps stay the same
    pipe.steps[2] = Pipeline.parse("gaussian_blur:sigma=2").steps[0]  # as many steps, another one
    second = pipe.compile()
    assert second is not first and second[1].params["sigma"] == 2.0
    unfused = Pipeline.parse("gamma:gamma=2 | invert", fuse=False)
    assert unfused.compile() == unfused.steps and unfused.compile() is not unfused.steps


def test_strings_in_a_pipeline_read_files_from_base_dir(tmp_path) -> None:
    (tmp_path / "k.txt").write_text("0 2 0\n")
    pipe = Pipeline(["convolve:kernel=@k.txt"], base_dir=tmp_path)
    assert pipe.steps[0].params["kernel"] == ((0.0, 2.0, 0.0),)


def test_linear_light_of_the_run_then_the_pipeline_then_the_default() -> None:
    # A 1-px checkerboard blurred: 128 on the codes, 188 = 255 * srgb_encode(0.5) in linear light
    # (IEC 61966-2-1: 1.055 * 0.5 ** (1 / 2.4) - 0.055 = 0.7354); 1 code of tolerance.
    checker = np.dstack([(np.indices((48, 48)).sum(0) % 2 * 255).astype(np.uint8)] * 3)
    centre = (slice(16, 32), slice(16, 32))
    want = round(255 * (1.055 * 0.5 ** (1 / 2.4) - 0.055))
    on = Pipeline(["gaussian_blur:sigma=6"], linear=True)
    off = Pipeline(["gaussian_blur:sigma=6"])
    for pipe, linear, brighter in ((on, None, True), (on, False, False), (off, True, True), (off, None, False)):
        out = pipe.run(checker, backend="cpu", linear=linear)[0][centre].astype(int)
        if brighter:
            assert np.abs(out - want).max() <= 1, (pipe.linear, linear)
        else:
            assert np.abs(out - 128).max() <= 1, (pipe.linear, linear)
