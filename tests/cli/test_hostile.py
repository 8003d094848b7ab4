"""Hostile inputs through the CLI, each built here and run bounded in time and memory (issue 24).

Every case is a process of its own (forked by :mod:`tests.bounded_server`) with ``RLIMIT_AS`` and
a wall-clock timeout, so a regression
fails the test instead of hanging the suite or exhausting the machine. The contract for a
refused input: the stated exit code, one error line naming the file, no traceback, no
output file, and nothing of a file outside the allowed folder in any output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

MEMORY_LIMIT = 3 << 30  # bytes of address space: the breaks used 4.8 to 9.5 GB
TIME_LIMIT = 60.0
MEASURED: dict[str, tuple[float, float]] = {}  # case -> (seconds, peak MiB), printed with -s


@pytest.fixture(scope="module")
def server() -> Iterator[subprocess.Popen[str]]:
    """One :mod:`tests.bounded_server` for the module: it forks a child per command."""
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen([sys.executable, "-m", "tests.bounded_server"], cwd=root, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as proc:
        yield proc
        assert proc.stdin is not None
        proc.stdin.close()


@pytest.fixture(autouse=True)
def _bounded(server: subprocess.Popen[str]) -> Iterator[None]:
    SERVER.append(server)
    yield
    SERVER.clear()


SERVER: list[subprocess.Popen[str]] = []


def run_bounded(*args: object, cwd: Path, case: str = "", preload: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    """Run ``cvfilters ARGS`` in a process under the limits: ``(exit code, stderr lines)``; records its
    time and peak RSS. The process is forked from :mod:`tests.bounded_server` (imports done once;
    ``preload``: modules the command imports that the server imports first, once for the module).

    A refused input writes nothing on standard output either (checked here for every non-zero exit but
    ``--dry-run``'s report).
    """
    (server,) = SERVER
    assert server.stdin is not None and server.stdout is not None
    with tempfile.TemporaryDirectory() as streams:
        out, err = Path(streams) / "out", Path(streams) / "err"
        request = {"args": [str(arg) for arg in args], "cwd": str(cwd), "out": str(out), "err": str(err),
                   "env": {**os.environ, "OPENCV_OPENCL_RUNTIME": "disabled"}, "limit": MEMORY_LIMIT,
                   "timeout": TIME_LIMIT, "preload": list(preload)}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        code, seconds = os.waitstatus_to_exitcode(reply["status"]), reply["seconds"]
        if code == -signal.SIGKILL and seconds >= TIME_LIMIT:
            pytest.fail(f"{case or args}: still running after {TIME_LIMIT} s")
        printed, lines = out.read_bytes(), err.read_bytes().decode("utf-8", "replace").splitlines()
    if code != 0 and "--dry-run" not in args:  # a dry run prints its plan and counts whatever happens
        assert printed == b"", printed[:200]
    if case:
        MEASURED[case] = (seconds, reply["maxrss"] / 1024)
        print(f"\n[hostile] {case}: exit {code} in {seconds:.2f} s, peak RSS {reply['maxrss'] / 1024:.0f} MiB")
    return code, lines


def refused(code: int, lines: list[str], expected: int, *fragments: str) -> str:
    assert code == expected, (code, lines)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    cv2.imwrite(str(tmp_path / "strip.png"), np.full((4, 6, 3), 128, np.uint8))
    (tmp_path / "bundle").mkdir()
    (tmp_path / "secret.txt").write_bytes(b"SECRETSECRET")
    return tmp_path


def pipeline(path: Path, *steps: str) -> Path:
    path.write_text("version: 1\nsteps:\n" + "".join(f"- {step}\n" for step in steps))
    return path


# --- confinement ----------------------------------------------------------------------
def external_data_model(path: Path, location: str) -> Path:
    """A 1x1 Mul model whose weight (3 float32) lives in the external file ``location``."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((1, 3, 1, 1), np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "12")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    io = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 3, None, None]) for name in ("input", "output")]
    graph = helper.make_graph([helper.make_node("Mul", ["input", "w"], ["output"])], "g", io[:1], io[1:],
                              initializer=[weight])
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    assert onnx.load_model_from_string(path.read_bytes()).graph.initializer[0].data_location == TensorProto.EXTERNAL
    return path


@pytest.mark.parametrize("location", ["../secret.txt", "link.bin", "/etc/passwd"])
def test_model_external_data_outside_the_folder_is_refused(work: Path, location: str) -> None:
    (work / "bundle" / "link.bin").symlink_to(work / "secret.txt")
    external_data_model(work / "bundle" / "look.onnx", location)
    pipeline(work / "bundle" / "look.yaml", "{filter: dnn_style, params: {model: '@look.onnx', input_range: '0..1'}}")
    code, lines = run_bounded("apply", "strip.png", "-o", "leak.png", "-p", "bundle/look.yaml", cwd=work,
                              case=f"onnx external data {location}", preload=("onnx",))
    refused(code, lines, 2, "look.onnx", "external data")
    assert not (work / "leak.png").exists()


def test_model_external_data_inside_the_folder_is_read(work: Path) -> None:
    (work / "bundle" / "w.bin").write_bytes(np.full(3, 0.5, np.float32).tobytes())
    external_data_model(work / "bundle" / "look.onnx", "w.bin")
    pipeline(work / "bundle" / "look.yaml", "{filter: dnn_style, params: {model: '@look.onnx', input_range: '0..1'}}")
    code, lines = run_bounded("apply", "strip.png", "-o", "half.png", "-p", "bundle/look.yaml", cwd=work,
                              preload=("onnx",))
    assert code == 0, lines
    assert np.array_equal(cv2.imread(str(work / "half.png")), np.full((4, 6, 3), 64, np.uint8))  # 128 * 0.5


def test_control_characters_in_names_are_escaped(work: Path) -> None:
    name = "a\x1b[2J\x1b[31m\nerror: forged.png"
    (work / name).write_bytes(b"not an image")
    code, lines = run_bounded("apply", name, "-o", "out.png", "-f", "invert", cwd=work, case="control characters")
    line = refused(code, lines, 1, "a\\033[2J\\033[31m\\nerror: forged.png")
    assert "\x1b" not in line


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "proc"])
@pytest.mark.parametrize("role", ["kernel", "pipeline", "model", "nested", "lut", "cli-kernel", "cli-model", "cli-lut"])
def test_only_regular_files_are_read(work: Path, kind: str, role: str) -> None:
    suffix = {"kernel": ".csv", "pipeline": ".yaml", "model": ".onnx", "nested": ".yaml", "lut": ".cube",
              "cli-kernel": ".csv", "cli-model": ".onnx", "cli-lut": ".cube"}[role]
    target = work / "bundle" / f"special{suffix}"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero-link":
        target.symlink_to("/dev/zero")
    else:
        target.symlink_to("/proc/self/mem")
    args: list[object] = ["apply", "strip.png", "-o", "out.png"]
    if role == "pipeline":
        args += ["-p", target]
    elif role.startswith("cli-"):  # named on the command line: any folder, but still only a regular file
        args += ["-f", {"cli-kernel": "convolve:kernel", "cli-model": "dnn_style:model", "cli-lut": "lut:file"}[role]
                 + f"=@{target}"]
    else:
        value = {"kernel": "convolve:kernel=@special.csv", "model": "dnn_style:model=@special.onnx",
                 "nested": "masked:filter=@special.yaml,mask=ellipse:0.5,0.5,0.3,0.4",
                 "lut": "lut:file=@special.cube"}[role]
        name, params = value.split(":", 1)
        body = ", ".join(f"{k}: '{v}'" for k, v in (p.split("=", 1) for p in params.split(",", 1)))
        args += ["-p", pipeline(work / "bundle" / "p.yaml", f"{{filter: {name}, params: {{{body}}}}}")]
    if kind != "fifo" and role in ("kernel", "model", "nested", "lut"):
        expected = "outside"  # the link leaves the pipeline's folder: refused before its kind is looked at
    else:
        expected = {"fifo": "FIFO", "dev-zero-link": "device", "proc": "/proc"}[kind]
    code, lines = run_bounded(*args, cwd=work, case=f"{kind} as {role}")
    refused(code, lines, 2, expected)
    assert not (work / "out.png").exists()


# --- budgets before work --------------------------------------------------------------
def npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header


@pytest.mark.parametrize("case", ["lying", "huge"])
@pytest.mark.parametrize("role", ["kernel", "lut"])
def test_npy_shapes_are_checked_from_the_header(work: Path, case: str, role: str) -> None:
    path = work / "bundle" / "k.npy"
    if case == "lying":
        path.write_bytes(npy_header((100000, 100000)) + b"\0" * 64)  # 193 bytes claiming 80 GB
    else:
        with path.open("wb") as file:  # 400 MB, sparse: cheap to make
            file.write(npy_header((10000, 5000)))
            file.truncate(400_000_000 + 128)
    spec = "convolve:kernel=@bundle/k.npy" if role == "kernel" else "lut:file=@bundle/k.npy"
    code, lines = run_bounded("apply", "strip.png", "-o", "out.png", "-f", spec, cwd=work, case=f"npy {case} {role}")
    refused(code, lines, 2, "k.npy")


def hdr_bomb(path: Path) -> Path:
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 20000 +X 20000\n" + b"\x02\x02\x4e\x20" * 16)
    return path


@pytest.mark.parametrize("kind", ["hdr", "pfm", "pam"])
@pytest.mark.parametrize("dry", [False, True])
def test_text_headers_are_sized_before_decoding(work: Path, kind: str, dry: bool) -> None:
    if kind == "hdr":
        hdr_bomb(work / "bomb.hdr")
    elif kind == "pfm":
        (work / "bomb.pfm").write_bytes(b"PF\n30000 30000\n-1.0\n" + b"\0" * 1024)
    else:
        (work / "bomb.pam").write_bytes(b"P7\nWIDTH 30000\nHEIGHT 30000\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n"
                                        + b"\0" * 1024)
    code, lines = run_bounded("apply", f"bomb.{kind}", "-o", "out.png", "-f", "invert", *(["--dry-run"] * dry),
                              cwd=work, case=f"{kind} bomb{' dry-run' if dry else ''}")
    refused(code, lines, 1, f"bomb.{kind}", "exceeds the limit")
    assert not (work / "out.png").exists()


def test_jpeg_scans_are_bounded(work: Path) -> None:
    image = (np.random.default_rng(0).random((64, 64, 3)) * 255).astype(np.uint8)
    data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    last = data.rfind(b"\xff\xda")
    (work / "scans.jpg").write_bytes(data[:-2] + data[last:-2] * 2000 + b"\xff\xd9")
    code, lines = run_bounded("apply", "scans.jpg", "-o", "out.png", "-f", "invert", cwd=work, case="jpeg 2000 scans")
    refused(code, lines, 1, "scans.jpg", "scans")
    (work / "fine.jpg").write_bytes(data)
    assert run_bounded("apply", "fine.jpg", "-o", "out.png", "-f", "invert", cwd=work)[0] == 0


def test_nested_pipeline_expansion_is_bounded(work: Path) -> None:
    for level in range(4):
        step = (f"{{filter: masked, params: {{filter: '@f{level + 1}.yaml', mask: 'ellipse:0.5,0.5,0.3,0.4'}}}}"
                if level < 3 else "{filter: invert}")
        pipeline(work / "bundle" / f"f{level}.yaml", *[step] * 10)
    for dry in ([], ["--dry-run"]):
        code, lines = run_bounded("apply", "strip.png", "-o", "out.png", "-p", "bundle/f0.yaml", *dry, cwd=work,
                                  case=f"10^4 nested steps{' dry-run' if dry else ''}")
        refused(code, lines, 2, "more than 256 steps")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_deep_nesting_is_refused_early(work: Path, suffix: str) -> None:
    path = work / f"deep{suffix}"
    if suffix == ".yaml":
        path.write_text("version: 1\nsteps: " + "[" * 20000 + "]" * 20000 + "\n")
    else:
        path.write_text('{"version": 1, "steps": ' + "[" * 20000 + "]" * 20000 + "}")
    code, lines = run_bounded("apply", "strip.png", "-o", "out.png", "-p", path.name, cwd=work,
                              case=f"20000 levels {suffix}")
    refused(code, lines, 2, "nested more than 32 levels")


def test_model_output_is_checked_against_the_budget(work: Path) -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    io = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 3, None, None]) for name in ("input", "output")]
    scales = numpy_helper.from_array(np.array([1, 1, 64, 64], np.float32), "scales")
    graph = helper.make_graph([helper.make_node("Resize", ["input", "", "scales"], ["output"], mode="nearest")], "g",
                              io[:1], io[1:], initializer=[scales])
    (work / "up.onnx").write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                                   .SerializeToString())
    cv2.imwrite(str(work / "big.png"), np.zeros((256, 256, 3), np.uint8))
    code, lines = run_bounded("apply", "big.png", "-o", "out.png", "-f", "dnn_style:model=@up.onnx,input_range=0..1",
                              cwd=work, case="onnx 64x upsampling")
    refused(code, lines, 1, "up.onnx", "4096 output values per input value")
    assert not (work / "out.png").exists()


# --- pipeline values ------------------------------------------------------------------
@pytest.mark.parametrize(("body", "fragment"), [
    ("version: 1\nsteps:\n- filter: gaussian_blur\n  params: {sigma: 1, sigma: 2}\n", "'sigma' is given twice"),
    ("version: 1\nversion: 1\nsteps: [{filter: invert}]\n", "'version' is given twice"),
    ("version: 1\nsteps: [{filter: convolve, params: {kernel: [[true]]}}]\n", "numbers only"),
    ("version: 1\nsteps: [{filter: convolve, params: {kernel: [['1']]}}]\n", "numbers only"),
    ("version: 1\nsteps: [{filter: gaussian_blur, params: {sigma: " + "9" * 5000 + "}}]\n", "not a valid pipeline"),
])
def test_pipeline_values_that_are_refused(work: Path, body: str, fragment: str) -> None:
    (work / "p.yaml").write_text(body)
    code, lines = run_bounded("apply", "strip.png", "-o", "out.png", "-p", "p.yaml", cwd=work)
    refused(code, lines, 2, fragment)


def test_duplicate_json_keys_are_refused(work: Path) -> None:
    (work / "p.json").write_text('{"version": 1, "steps": [{"filter": "invert"}], "steps": []}')
    code, lines = run_bounded("apply", "strip.png", "-o", "out.png", "-p", "p.json", cwd=work)
    refused(code, lines, 2, "'steps' is given twice")


# --- exit codes and messages ------------------------------------------------------------
@pytest.mark.parametrize(("args", "fragment"), [
    (["-o", "out.xyz"], "-o out.xyz: no encoder for .xyz"),
    (["-o", "no/such/dir/out.png"], "folder no/such/dir does not exist"),
    (["-o", "noext"], "-o noext: has no extension"),
    (["-o", "hard.png"], "would replace an input file"),
    (["-o", "out.png", "-f", "convolve:kernel=[[1e308,1e308]],normalize=true"], "whose sum is finite"),
])
def test_usage_errors_exit_2_and_create_nothing(work: Path, args: list[str], fragment: str) -> None:
    os.link(work / "strip.png", work / "hard.png")
    before = sorted(p.name for p in work.iterdir())
    command = ["apply", "strip.png", *args] + ([] if "-f" in args else ["-f", "invert"])
    code, lines = run_bounded(*command, cwd=work)
    refused(code, lines, 2, fragment)
    assert sorted(p.name for p in work.iterdir()) == before


def test_a_bad_environment_value_is_one_usage_error(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cv2.imwrite(str(work / "b.png"), np.zeros((4, 4, 3), np.uint8))
    monkeypatch.setenv("CVFILTERS_MAX_PIXELS", "abc")
    code, lines = run_bounded("apply", "strip.png", "b.png", "-o", "out", "-f", "invert", cwd=work)
    refused(code, lines, 2, "CVFILTERS_MAX_PIXELS must be a positive integer, got 'abc'")
    assert not (work / "out").exists()


def test_a_full_standard_output_is_one_line(work: Path) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "cvfilters", "apply", "strip.png", "-o", "-", "--format", "png",
                               "-f", "invert"], cwd=work, stdout=full, stderr=subprocess.PIPE, timeout=60)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 1, lines
    assert lines == ["error: standard output: cannot be written: No space left on device"], lines


def test_a_missing_input_claims_no_output_name(work: Path) -> None:
    (work / "img").mkdir()
    cv2.imwrite(str(work / "img" / "a.png"), np.zeros((4, 4, 3), np.uint8))
    code, lines = run_bounded("apply", "/nope/a.png", "img/a.png", "-o", "out/", "-f", "invert", cwd=work)
    assert code == 1 and lines[0] == "error: /nope/a.png: no such file" and lines[-1].startswith("done 1, failed 1")
    assert (work / "out" / "a.png").exists()


def test_globs_follow_pythons_rules_any_case_and_no_loops(work: Path) -> None:
    (work / "photos" / "sub").mkdir(parents=True)
    for name in ("photos/a.jpg", "photos/sub/b.JPG"):
        cv2.imwrite(str(work / name), np.zeros((4, 4, 3), np.uint8))
    (work / "photos" / "sub" / "loop").symlink_to("..")
    for pattern, expected, recursive in (("photos/**/*.jpg", {"a.jpg", "sub/b.JPG"}, []),
                                         ("photos/**/*.jpg", {"a.jpg", "sub/b.JPG"}, ["-r"]),
                                         ("photos/*.JPG", {"a.jpg"}, [])):
        out = work / f"out{len(expected)}{len(recursive)}"
        code, lines = run_bounded("apply", pattern, "-o", out.name, "-f", "invert", *recursive, cwd=work)
        assert code == 0, lines
        assert {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} == expected, pattern


def test_an_unexpected_error_in_a_batch_names_its_file_and_the_batch_goes_on(work: Path) -> None:
    tifffile = pytest.importorskip("tifffile")
    nan = np.full((8, 8, 3), 0.5, np.float32)
    nan[2, 2, 1] = np.nan
    tifffile.imwrite(work / "nan.tif", nan)
    cv2.imwrite(str(work / "good.png"), np.zeros((8, 8, 3), np.uint8))
    for jobs in ("1", "2"):
        out = work / f"out{jobs}"
        code, lines = run_bounded("apply", "nan.tif", "good.png", "strip.png", "-o", out.name, "-f", "quantize",
                                  "--jobs", jobs, cwd=work)
        assert code == 1 and [line for line in lines if line.startswith("error: ")] == [
            "error: nan.tif: the image holds NaN or infinite values, which k-means colour quantization cannot "
            "cluster (replace them first, e.g. with numpy.nan_to_num)"], lines
        assert lines[-1].startswith("done 2, failed 1") and sorted(p.name for p in out.iterdir()) == ["good.png",
                                                                                                       "strip.png"]


def test_messages_never_name_temporary_files(work: Path) -> None:
    writer = cv2.VideoWriter(str(work / "v.avi"), cv2.VideoWriter.fourcc(*"MJPG"), 10, (32, 24))
    if not writer.isOpened():
        pytest.skip("OpenCV has no MJPG writer here")
    for index in range(3):
        writer.write(np.full((24, 32, 3), index * 40, np.uint8))
    writer.release()
    code, lines = run_bounded("apply", "v.avi", "-o", "out.avi", "-f", "resize:width=16,height=12", cwd=work)
    assert code == 0 and not any(".tmp" in line for line in lines), lines  # videos may change size (issue 23)
    capture = cv2.VideoCapture(str(work / "out.avi"))
    assert (capture.get(cv2.CAP_PROP_FRAME_WIDTH), capture.get(cv2.CAP_PROP_FRAME_HEIGHT)) == (16, 12)
    capture.release()
    code, lines = run_bounded("apply", "v.avi", "-o", "out.avi", "-f", "no_such_filter", cwd=work)
    assert code == 2 and not any(".tmp" in line for line in lines), lines
    assert not [p for p in work.iterdir() if p.name.startswith(".")]
