"""The wheel stands on its own: built from the checkout and installed in a fresh environment
outside it, histeg finds its bundled samples, and ``histeg demo`` computes targets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from histeg.samples import SAMPLES_ROOT, build_sample, git_environment

pytestmark = pytest.mark.slow  # builds the C collectors, installs an environment, runs the whole pipeline

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DATA = "histeg/sample_data/"
EXTENSIONS = ("histeg/tracing/_ctracer.", "histeg/traces/_decode.")


def checkout_files() -> list[str]:
    """The files of the working tree as git sees them: tracked, or new and not ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, env=git_environment(), capture_output=True, check=True).stdout
    return sorted(path for path in listed.decode().split("\0") if path and (ROOT / path).is_file())


def uv(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run([sys.executable, "-m", "uv", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=600)
    assert result.returncode == 0, f"uv {args[0]}:\n{result.stdout}{result.stderr}"
    return result.stdout


def outside_environment(venv: Path) -> dict[str, str]:
    """Nothing points back at the checkout: no PYTHONPATH, no active environment but the new one."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout copied aside (a build writes build/ and egg-info next to the sources, and
    reuses stale ones), then sdist and the wheel made from that sdist, as an index would get them."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    for path in checkout_files():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, source / path)
    # the interpreter running the tests builds it: the checkout's .python-version names one that may be absent
    uv("build", "--quiet", "--python", sys.executable, "--out-dir", str(base / "dist"), str(source), cwd=base)
    wheels = list((base / "dist").glob("histeg-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_holds_every_sample_file_and_the_c_collectors(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    samples = {path for path in checkout_files() if path.startswith(SAMPLE_DATA)}
    assert samples, "the samples live in the package"
    assert samples <= names, sorted(samples - names)
    assert not {name for name in names if name.startswith(SAMPLE_DATA)} - samples  # no __pycache__ or other leftovers
    for stem in EXTENSIONS:
        assert any(name.startswith(stem) and name.endswith((".so", ".pyd")) for name in names), f"{stem}* was not compiled into the wheel"


def test_demo_runs_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    uv("venv", "--quiet", "--python", sys.executable, str(venv))
    uv("pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = outside_environment(venv)

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import histeg, histeg.samples; print(histeg.__file__); print(histeg.samples.SAMPLES_ROOT)"],
        cwd=elsewhere, env=env, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    for location in where:
        assert Path(location).resolve().is_relative_to(venv.resolve()), location
        assert not Path(location).resolve().is_relative_to(ROOT), location

    result = subprocess.run(
        [str(venv / "bin" / "histeg"), "demo", "--dir", str(tmp_path / "d"), "--json"],
        cwd=elsewhere, env=env, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["failedVersions"] == []

    reference = build_sample("casino", tmp_path / "reference")
    shas = subprocess.run(["git", "rev-list", "--reverse", "main"], cwd=reference, env=git_environment(), capture_output=True, text=True, check=True).stdout.split()
    assert [version["identifier"] for version in summary["steps"]["extract"]["versions"]] == shas  # the shipped steps are the checkout's, byte for byte

    expected = tomllib.loads((SAMPLES_ROOT / "casino" / "expected.toml").read_text(encoding="utf-8"))["step"]
    targets = summary["steps"]["targets"]
    assert len(targets) == len(expected)
    for step, computed in zip(expected, targets):
        if not step["compared"]:
            continue
        assert isinstance(computed["targets"], int), (step["folder"], computed)
        assert (computed["targets"] == 0) == step["no_targets"], (step["folder"], computed)
    assert sum(computed.get("targets", 0) for computed in targets) > 0
