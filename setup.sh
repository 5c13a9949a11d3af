#!/usr/bin/env bash
# Installs everything tso needs on Debian 12 and builds it (Release) in build/.
#   ./setup.sh            # then ./test.sh
# Steps: Debian packages (apt-get, skipped when all are present), a Python
# venv in .venv with the test oracles' packages and oneDNN for runtime/cpu
# (requirements.txt), then CMake configure + build, and the Python module `tso`
# (built into build/python) on the venv's path through a .pth file. CUDA is
# used when /usr/local/cuda exists.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  # toolchain
  cmake ninja-build g++ clang clang-format libclang-rt-14-dev git
  # libraries of the design (DESIGN.md: layout and dependencies)
  libz3-dev libboost-graph-dev libeigen3-dev libonnx-dev libonnx-testdata
  libprotobuf-dev protobuf-compiler libgtest-dev libgmock-dev libcli11-dev
  nlohmann-json3-dev libtbb-dev libopenmpi-dev openmpi-bin
  # Python, for the venv (onnx, onnxruntime, numpy and oneDNN go into .venv)
  python3 python3-pip python3-venv
  # the Python module's bindings (python/)
  pybind11-dev
  # the HTML report (tso optimize --report OUT.html): Graphviz draws its
  # rewrite sites; its test opens the page in headless Chromium
  graphviz chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} Debian packages present"
fi

# Python oracles for tests. A broken venv (e.g. python3 moved) is rebuilt.
if ! .venv/bin/python -c 'import sys' 2>/dev/null; then
  rm -rf .venv
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
.venv/bin/python -c 'import onnx, onnxruntime, numpy; print("setup: python oracles:",
  "onnx", onnx.__version__, "onnxruntime", onnxruntime.__version__, "numpy", numpy.__version__)'
test -f .venv/include/dnnl.hpp && test -e .venv/lib/libdnnl.so ||
  { echo "setup: oneDNN is missing from .venv (requirements.txt: onednn-devel-cpu-gomp)" >&2; exit 1; }

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
# The module stays where CMake builds it; the venv finds it through a .pth file.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/build/python" > "$site/tso.pth"
.venv/bin/python -c 'import tso; print("setup: python module:", tso.__file__)'
