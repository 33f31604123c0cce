#!/usr/bin/env bash
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=${PYTHON:-python3}
export PIP_NO_CACHE_DIR=1

install_requirements() {
  local file="$1"; shift
  "$PY" -m pip install --require-hashes -r "$ROOT/requirements/$file" "$@"
}

function build_wheel {
  pip wheel --no-deps -w dist "$ROOT"
}

case "${1:-all}" in
  dev|test) install_requirements dev.txt --upgrade ;;
  cuda*)    install_requirements cuda.txt ;;
  *)        install_requirements base.txt && build_wheel ;;
esac

for extra in docs lint; do
  if [[ -f "requirements/$extra.txt" ]]; then
    uv pip install --system -r "requirements/$extra.txt" || echo "skip $extra" >&2
  fi
done

while read -r pkg; do pip download "$pkg" -d /tmp/wheels; done < pins.txt
