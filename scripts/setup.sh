#!/usr/bin/env bash
# The one setup path: Debian packages, then torch (LibTorch) + matplotlib in a cached virtual environment.
#
# Used by ./ablate, ./report, ./run_all.sh and scripts/test.sh whenever something is missing.
# Prints nothing on success unless --verbose; `scripts/setup.sh --python` prints the interpreter to use.
#
# Environment:
#   STEPWISE_VENV   where the virtual environment lives (default: a per-user cache dir keyed by the pin,
#                   so fresh clones and CI reuse the multi-GB torch install instead of reinstalling)
#   STEPWISE_PYTHON use this interpreter as is (it must import torch); skips the venv entirely
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/scripts/requirements.txt"

# Debian packages the build, the tests and the dashboard check need.
APT_PACKAGES=(
  cmake ninja-build g++ python3-venv
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  libgloo-dev  # headers only: ProcessGroupGloo.hpp includes them; torch carries its own gloo library
  chromium
)

log() { echo "[setup] $*" >&2; }

pin_key() {
  # The environment is keyed by the requirements file, so a new pin gets a new environment.
  grep -v '^\s*#' "$REQUIREMENTS" | grep -v '^\s*$' | sha256sum | cut -c1-12
}

venv_dir() {
  local torch_pin
  torch_pin="$(grep -E '^torch==' "$REQUIREMENTS" | cut -d= -f3)"
  echo "${STEPWISE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/venv-torch${torch_pin}-$(pin_key)}"
}

missing_apt_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

install_apt() {
  command -v dpkg-query >/dev/null || { log "not a Debian system: install ${APT_PACKAGES[*]} by hand"; return 0; }
  local missing
  missing="$(missing_apt_packages)"
  [[ -z "$missing" ]] && return 0
  if ! command -v apt-get >/dev/null; then
    log "apt-get not available; missing Debian packages: $missing"
    return 0
  fi
  local sudo=()
  [[ "$(id -u)" != 0 ]] && sudo=(sudo)
  local apt_log
  apt_log="$(mktemp -t stepwise-apt.XXXXXX)"
  log "installing Debian packages: $missing (log: $apt_log)"
  if ! "${sudo[@]}" apt-get update -qq >"$apt_log" 2>&1 ||
     ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends $missing \
       >>"$apt_log" 2>&1; then
    # A GPU machine has no package registry: carry on with what is there and let CMake name what is missing.
    log "WARNING: could not install $missing (no registry? see $apt_log); continuing"
  fi
}

# Prints the python interpreter whose torch the build uses.
resolve_python() {
  if [[ -n "${STEPWISE_PYTHON:-}" ]]; then
    echo "$STEPWISE_PYTHON"
    return
  fi
  # A machine that already has torch (a GPU box) uses it instead of installing one.
  if python3 -c 'import torch' 2>/dev/null; then
    command -v python3
    return
  fi
  echo "$(venv_dir)/bin/python"
}

install_venv() {
  local py venv
  py="$(resolve_python)"
  [[ "$py" != "$(venv_dir)/bin/python" ]] && return 0
  venv="$(venv_dir)"
  [[ -f "$venv/.stepwise-complete" ]] && return 0
  mkdir -p "$(dirname "$venv")"
  # Two concurrent setups (a test and ./ablate) must not install into the same directory at once.
  exec 9>"$venv.lock"
  flock 9
  if [[ ! -f "$venv/.stepwise-complete" ]]; then
    log "creating $venv (torch wheel with CUDA libraries: several GB, once per pin)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip >&2
    "$venv/bin/pip" install -q -r "$REQUIREMENTS" >&2 || { log "pip install failed"; rm -rf "$venv"; exit 1; }
    touch "$venv/.stepwise-complete"
  fi
  flock -u 9
}

main() {
  case "${1:-}" in
    --python) install_apt; install_venv; resolve_python ;;
    --venv-dir) venv_dir ;;
    "" ) install_apt; install_venv ;;
    *) echo "usage: scripts/setup.sh [--python|--venv-dir]" >&2; exit 2 ;;
  esac
}

main "$@"
