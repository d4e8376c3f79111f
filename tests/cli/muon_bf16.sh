#!/usr/bin/env bash
# muon with ns_dtype=bf16 against torch.optim.Muon's own output (PyTorch
# 2.9, recorded in tests/data/muon_bf16.json by scripts/muon_bf16_cases.py):
# every case close, most of them the same to float32 rounding (see
# muon_bf16_check.py).
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/muon_bf16_check.py" "$OPTBENCH" "$here/../data/muon_bf16.json"
