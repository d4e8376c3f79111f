#!/usr/bin/env bash
# Optimizer conformance: every case of the shared golden folder (computed
# independently in float64) through `optbench replay`, compared by its check.py.
set -uo pipefail
: "${OPTBENCH:?}"
golden="${OB_SHARED_DIR:-}/golden"
if [ -z "${OB_SHARED_DIR:-}" ] || [ ! -f "$golden/check.py" ]; then
  echo "skipped: no golden cases at '$golden'"
  exit 77
fi
python3 "$golden/check.py" "$OPTBENCH" "$golden"
