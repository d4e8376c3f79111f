#!/usr/bin/env bash
# The bert and cnn models against PyTorch autograd (scripts/models_torch.py):
# one float32 training step of bert-tiny (tied head with bias, untied without)
# and cnn-tiny (plain and residual) at small sizes, its loss and every
# parameter's gradient against the float64 PyTorch models of
# scripts/bench_torch_cpu.py on the same parameters and batch. Skipped (77)
# where no python3 has torch: PyTorch is not a dependency of optbench.
set -uo pipefail
: "${WL_EXPORT:?}"
here=$(cd "$(dirname "$0")" && pwd)
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c "import torch, numpy" 2>/dev/null; then
    exec "$py" "$here/../../scripts/models_torch.py" --wl-export "$WL_EXPORT"
  fi
done
echo "skipped: no python3 with torch and numpy (Debian: python3-torch)"
exit 77
