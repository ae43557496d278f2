"""Shared helpers of the Python tests: the repository root and the `sweeper` binary that
the tests compare against (the command line is the reference the bindings must match)."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def sweeper_bin():
    """The `sweeper` binary: $SWEEPER_BIN, else target/{debug,release}/sweeper, else PATH."""
    env = os.environ.get("SWEEPER_BIN")
    if env:
        return env
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("debug", "release"):
        candidate = target / profile / "sweeper"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("sweeper")


@pytest.fixture(scope="session")
def cli():
    """Runs the command line and returns (exit code, stdout, stderr)."""
    path = sweeper_bin()
    if path is None:
        pytest.skip("no sweeper binary (cargo build -p sweeper-cli, or set SWEEPER_BIN)")

    def call(*args, stdin=None):
        p = subprocess.run(
            [path, *map(str, args)], capture_output=True, text=True, input=stdin, timeout=300
        )
        return p.returncode, p.stdout, p.stderr

    return call


def cli_json(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)
