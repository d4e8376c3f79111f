#!/usr/bin/env bash
# Conformance with PyTorch's newer optimizers in every build, without
# PyTorch: cases recorded from torch 2.15 (tests/data/torch_recorded.json,
# scripts/conformance_torch.py --record) replayed and compared as
# conformance_torch.sh compares them live (see torch_recorded_check.py).
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/torch_recorded_check.py" "$OPTBENCH" "$here/../data/torch_recorded.json"
