#!/usr/bin/env bash
# Differential conformance against torch.optim (scripts/conformance_torch.py):
# 40 random cases per optimizer, float32 optbench against float64 PyTorch, at
# every step. Skipped (77) where no python3 has torch: PyTorch is not a
# dependency of optbench.
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c "import torch, numpy" 2>/dev/null; then
    exec "$py" "$here/../../scripts/conformance_torch.py" "$OPTBENCH" --cases 40 --seed 11
  fi
done
echo "skipped: no python3 with torch and numpy (Debian: python3-torch)"
exit 77
