# tests/cli/common.bash - what the CLI tests share; source it first:
#   . "$(dirname "$0")/common.bash"
# Gives strict pipes, $OPTBENCH (required), $here (this folder), a scratch
# folder $tmp removed on exit, and two ways to record a failure:
#  - check DESCRIPTION COMMAND... runs COMMAND and on failure prints
#    "FAIL: DESCRIPTION" and sets fail=1 (end the script with: exit $fail);
#  - fail MESSAGE prints "FAIL: MESSAGE", counts it in $fails and sets fail=1
#    too (end the script with: echo "$fails failed"; [ $fails -eq 0 ]).
# q DB SQL prints the rows of a query, one a line, columns joined by '|';
# copy_as_rerun SRC DST: a copy of a database with a database id of its own;
# wait_for GLOB waits (up to 20 s) until a file matching GLOB exists.
# check_tex DESCRIPTION FILE.tex checks that a report's summary.tex compiles
# in a LaTeX document (booktabs, graphicx) where pdflatex with booktabs is
# installed (Debian: texlive-latex-recommended); returns 1 (a note) elsewhere.
set -uo pipefail
: "${OPTBENCH:?}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
fails=0
check() { # description, command...
  local what="$1"; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
fail() { echo "FAIL: $*"; fails=$((fails+1)); fail=1; }
q() { python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1], isolation_level=None).execute(sys.argv[2]).fetchall(); print('\n'.join('|'.join(str(x) for x in row) for row in r))" "$@"; }
# copy_as_rerun SRC DST copies a database and gives the copy a database id of
# its own: a deterministic rerun's stand-in (compare refuses a copy of the
# baseline as its candidate: its runs are the baseline's own).
copy_as_rerun() {
  cp "$1" "$2" && python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute(\"update meta set value = 'rerun' || value where key = 'database_id'\"); d.commit()" "$2"
}
wait_for() { for _ in $(seq 2000); do compgen -G "$1" >/dev/null && return 0; sleep 0.01; done; return 1; }
check_tex() { # description, summary.tex
  command -v pdflatex >/dev/null && kpsewhich booktabs.sty >/dev/null 2>&1 || return 1
  local d; d=$(mktemp -d -p "$tmp")
  printf '\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n\\input{%s}\n\\end{document}\n' \
    "$2" >"$d/doc.tex"
  (cd "$d" && pdflatex -interaction=nonstopmode -halt-on-error doc.tex >"$d/tex.log" 2>&1)
  check "$1 (see $d/tex.log)" test -s "$d/doc.pdf"
  [ -s "$d/doc.pdf" ] || tail -20 "$d/tex.log"
  return 0
}
