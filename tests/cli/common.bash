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
# signal_in_run PID DB CKDIR IDS SIG [DELAY] sends SIG to the run process
# PID while it trains one of the runs IDS (ids, blank-separated), whatever
# the timing: once CKDIR/run-ID of one of them holds a checkpoint (and DELAY
# seconds later, default 0), the process is paused (SIGSTOP) and that run's
# row in DB read: a run still 'running' gets the signal (delivered as the
# process goes on), one that has ended lets the wait go on to the next.
# Prints the run's id; returns 1 (nothing sent) where the process ended
# first or 60 s went by. runs_after DB ID [ID2] prints the ids of DB's runs
# in the order they started, from ID on (from the one after ID2, where that
# is later): the runs a process that trains the matrix of DB meets from
# ID on.
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
signal_in_run() { # pid, database, checkpoint folder, run ids, signal, delay
  local pid=$1 db=$2 dir=$3 ids=" $4 " sig=$5 delay=${6:-0} d k
  for _ in $(seq 6000); do
    for d in "$dir"/run-*; do
      k=${d##*/run-}
      [[ $ids == *" $k "* ]] && compgen -G "$d/ckpt-*.obck" >/dev/null || continue
      [ "$delay" = 0 ] || sleep "$delay"
      kill -STOP "$pid" 2>/dev/null || return 1
      if [ "$(q "$db" "select status from runs where id = $k" 2>/dev/null)" = running ]; then
        kill "-$sig" "$pid"
        kill -CONT "$pid"
        echo "$k"
        return 0
      fi
      kill -CONT "$pid"
    done
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}
runs_after() { # database, id, id before
  q "$1" "select id from runs order by started_at, id" | python3 -c '
import sys
order = sys.stdin.read().split()
at = order.index(sys.argv[1])
if sys.argv[2] in order: at = max(at, order.index(sys.argv[2]) + 1)
print(" ".join(order[at:]))' "$2" "${3:-}"
}
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
