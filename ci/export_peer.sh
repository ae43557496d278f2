#!/usr/bin/env bash
# The peer comparison of `sweeper export` (ci/export_peer.py): installs aiconfigurator
# 0.12.0 from the package index into a fresh virtual environment under a temporary
# directory and compares sweeper's golden manifests with its generator's. Called by
# .ci/run; runs alone too:
#
#   bash ci/export_peer.sh
#
# The install is the step's cost (see the timing it prints); the comparison itself takes
# about a second. Set EXPORT_PEER_PYTHON to a Python that already has aiconfigurator
# 0.12.0 to skip the install.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
start=$SECONDS
if [[ -n "${EXPORT_PEER_PYTHON:-}" ]]; then
    py="$EXPORT_PEER_PYTHON"
else
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "${PYTHON:-python3}" -m venv "$tmp/venv"
    py="$tmp/venv/bin/python"
    "$py" -m pip install --quiet --disable-pip-version-check "aiconfigurator==0.12.0"
    echo "ci/export_peer.sh: aiconfigurator 0.12.0 installed in $((SECONDS - start)) s"
fi
"$py" "$root/ci/export_peer.py"
echo "ci/export_peer.sh: exit 0 after $((SECONDS - start)) s"
