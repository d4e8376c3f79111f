# tests/cli/common.bash - what the CLI tests share; source it first:
#   . "$(dirname "$0")/common.bash"
# Gives strict pipes, $OPTBENCH (required), a scratch folder $tmp removed on
# exit, and check DESCRIPTION COMMAND... which runs COMMAND and on failure
# prints "FAIL: DESCRIPTION" and sets fail=1 (end the script with: exit $fail).
set -uo pipefail
: "${OPTBENCH:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # description, command...
  local what="$1"; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
