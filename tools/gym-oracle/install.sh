#!/usr/bin/env bash
# Installs the parity oracle: a Python virtual environment with nemo-gym 0.7.0 and the
# OpenTelemetry packages its telemetry needs, every package pinned (requirements.txt), cached
# outside the repository under ${XDG_CACHE_HOME:-~/.cache}/gym-telemetry/ (GYM_ORACLE_HOME
# overrides). The cache key is this script, requirements.txt and the interpreter's version, so
# a change to either builds a new environment; an unchanged one is reused at once.
#
#   bash tools/gym-oracle/install.sh          install when missing; prints the environment's path
#   bash tools/gym-oracle/install.sh --print  prints the path when installed; exit 1 otherwise
#
# Python: nemo-gym 0.7.0 declares Requires-Python >=3.13.14 and nemo-lens 0.1.0 >=3.13. No
# Python 3.13 comes from the registries this project reaches (PyPI ships no interpreter,
# Debian 12 has 3.11); the machines' pyenv has a 3.13.0, which is used. GYM_ORACLE_PYTHON names
# another interpreter. The 0.7.0 wheel is installed with --no-deps --ignore-requires-python
# (3.13.0 < 3.13.14); its heavy dependencies are not installed: ray only as its wheel (Gym reads
# ray's version when its config module loads), no mlflow, datasets or vllm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${GYM_ORACLE_HOME:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gym-telemetry}

find_python() {
  if [ -n "${GYM_ORACLE_PYTHON:-}" ]; then echo "$GYM_ORACLE_PYTHON"; return 0; fi
  local candidate
  for candidate in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

if ! python=$(find_python); then
  echo "gym-oracle: no Python 3.13 found (python3.13 on PATH, pyenv's versions/3.13*, or GYM_ORACLE_PYTHON); nemo-gym 0.7.0 and nemo-lens need it" >&2
  exit 2
fi
version=$("$python" -c 'import sys; print(".".join(map(str, sys.version_info[:3])))')
key=$(cat "$here/install.sh" "$here/requirements.txt" <(echo "$version") | sha256sum | cut -c1-16)
venv="$root/gym-oracle-$key"

if [ -f "$venv/.complete" ]; then
  echo "$venv"
  exit 0
fi
if [ "${1:-}" = "--print" ]; then
  exit 1
fi

echo "gym-oracle: building $venv with Python $version ($python)" >&2
rm -rf "$venv"
mkdir -p "$root"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install --no-deps -r "$here/requirements.txt" >&2
"${pip[@]}" install --no-deps ray==2.58.0 >&2
"${pip[@]}" install --no-deps --ignore-requires-python nemo-gym==0.7.0 >&2
# What the oracle imports; a missing module fails the install here, not in the test.
"$venv/bin/python" -c 'import resources_servers.example_single_tool_call.app, nemo_gym.sandbox.api, nemo_gym.sandbox.providers.local.provider, nemo.lens, uvicorn' >&2
touch "$venv/.complete"
echo "$venv"
