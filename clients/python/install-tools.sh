#!/usr/bin/env bash
# Sets up the Python SDK's tools in a virtual environment, idempotently:
#
#   bash clients/python/install-tools.sh TOOLS_DIR
#
# which runs, from the repository's root:
#
#   python3 -m venv TOOLS_DIR/venv
#   TOOLS_DIR/venv/bin/pip install -r clients/python/requirements-ci.txt
#   TOOLS_DIR/venv/bin/pip install --no-build-isolation --no-deps --force-reinstall ./clients/python
#   TOOLS_DIR/venv/bin/python clients/python/tools/gen_types.py
#   TOOLS_DIR/venv/bin/python clients/python/tools/gen_sync.py
#
# The SDK is installed from the repository as a user would get it (built
# into a wheel, not editable), so its packaging is tested too; the build
# uses the pinned hatchling (no build isolation) and adds nothing beyond
# requirements-ci.txt (--no-deps). Its build hook (hatch_build.py) generates
# the typed modules from openapi/openapi.json and the blocking client from
# the asyncio one: the repository commits neither.
#
# The last two lines write the same generated modules into the checkout's
# src/ludotheque (git-ignored), only so that mypy --strict can check src/,
# tests/ and examples/ there; the tests themselves run against the
# installed package. Run this again after changing the SDK or the OpenAPI
# document.
#
# Then, from clients/python:
#
#   TOOLS_DIR/venv/bin/mypy                  # mypy --strict: package, tests, example bot, tools (pyproject.toml)
#   LUDO_BASE=http://127.0.0.1:8080 TOOLS_DIR/venv/bin/pytest
#
# with a server listening there (`ludo serve --listen 127.0.0.1:8080
# --data-dir "$(mktemp -d)"`); the suite fails when LUDO_BASE is unset or
# unreachable.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 TOOLS_DIR" >&2
    exit 2
fi
tools=$1
sdk=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv="$tools/venv"

mkdir -p "$tools"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$sdk/requirements-ci.txt"
# --force-reinstall: the version number does not change with the code, and
# a stale copy must never be the one tested.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall "$sdk"
# Into the checkout too, for mypy (git-ignored; the installed package has its own).
"$venv/bin/python" "$sdk/tools/gen_types.py"
"$venv/bin/python" "$sdk/tools/gen_sync.py"
"$venv/bin/python" -c 'import ludotheque; print("ludotheque SDK installed in", ludotheque.__path__[0])'
