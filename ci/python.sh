#!/usr/bin/env bash
# The Python package (crates/sweeper-py): builds its wheel with maturin into a fresh virtual
# environment under a temporary directory, installs it, and runs its pytest suite against
# the installed wheel and the `sweeper` binary. Called by .ci/run; runs alone too:
#
#   bash ci/python.sh                             # dev profile (reuses cargo test's builds)
#   SWEEPER_PY_PROFILE=release bash ci/python.sh  # the optimized wheel
#
# maturin, numpy and pytest come from the package index. The dev profile is the default
# because `cargo test --workspace` has just built the library crates in it, so only PyO3
# and the binding compile here; the tests check behaviour, not speed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
profile="${SWEEPER_PY_PROFILE:-dev}"
start=$SECONDS
tmp="$(mktemp -d)"
cleanup() {
    local code=$?
    rm -rf "$tmp"
    echo "ci/python.sh: exit $code after $((SECONDS - start)) s (temporary directory removed)"
}
trap cleanup EXIT

"$python" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check "maturin>=1.9,<2" numpy pytest
"$tmp/venv/bin/maturin" build --quiet --locked --profile "$profile" \
    -m crates/sweeper-py/Cargo.toml -i "$py" -o "$tmp/dist"
"$py" -m pip install --quiet --disable-pip-version-check "$tmp"/dist/sweeper_serving-*.whl
# The wheel carries the type stubs and the PEP 561 marker beside the extension module.
"$py" - "$tmp"/dist/sweeper_serving-*.whl <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
for want in ("sweeper/__init__.py", "sweeper/__init__.pyi", "sweeper/py.typed"):
    assert want in names, f"the wheel lacks {want}: {sorted(names)}"
assert any(n.startswith("sweeper/_sweeper") for n in names), sorted(names)
PY

# The command line the tests compare the bindings with.
cargo build --locked --quiet -p sweeper-cli
target="$(cargo metadata --format-version 1 --no-deps | "$py" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export SWEEPER_BIN="$target/debug/sweeper"
echo "ci/python.sh: wheel built and installed in $((SECONDS - start)) s ($profile profile)"

# From the temporary directory, so that `import sweeper` is the installed wheel.
cd "$tmp"
"$py" -m pytest -q -p no:cacheprovider "$root/crates/sweeper-py/tests"
