#!/usr/bin/env bash
# One-time (and idempotent) setup: Debian packages for the C++ build, and a project-local
# Python virtual environment that provides libtorch (through the torch wheel) and the
# Python references the oracle tests compare against.
#
# Pins (see README "Toolchain"):
#   torch 2.11.0  - the series the GPU machine runs; its PyPI wheel carries CUDA and libtorch's
#                   CMake package, so one download serves the engine build and the oracles.
#   transformers 5.x - needed for Qwen3.5 (qwen3_5) models in the oracles.
#   scripts/requirements-nodeps.txt - reference packages (z-lab's dflash) installed without
#                   their dependencies, whose own torch/transformers pins would replace ours.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  qt6-base-dev qt6-svg-dev qt6-base-dev-tools libgl-dev
  libqcustomplot-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libpcre2-dev libutf8proc-dev libzstd-dev libsqlite3-dev sqlite3 libssl-dev
  libgtest-dev libbenchmark-dev
  xvfb xauth
  clang libclang-rt-14-dev
  python3-venv file dpkg-dev fakeroot
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PY_REQUIREMENTS=scripts/requirements.txt
PY_REQUIREMENTS_NODEPS=scripts/requirements-nodeps.txt
STAMP=.venv/.requirements.sha256
want=$(cat "$PY_REQUIREMENTS" "$PY_REQUIREMENTS_NODEPS" | sha256sum | cut -d' ' -f1)
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  PYTHON=${PYTHON:-python3}
  [[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "$PY_REQUIREMENTS"
  .venv/bin/python -m pip install -q --no-deps -r "$PY_REQUIREMENTS_NODEPS"
  echo "$want" > "$STAMP"
fi
echo "setup: ok (torch $(.venv/bin/python -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)'))"
