#!/usr/bin/env bash
# Databases that cannot take what optbench writes: a read-only file, a
# read-only folder, a full disk (a file size limit), an older schema
# version, and a hot journal left by a process killed mid-write. Each gives a clear message; nothing already stored is lost; after
# a full disk, --resume completes the matrix with the uninterrupted results.
. "$(dirname "$0")/common.bash"
# the read-only cases leave read-only files behind
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
small=(run --workloads quadratic --optimizers sgd --steps 20 --backend cpu)

# Permissions do not stop root: run the read-only cases as an unprivileged user.
as_user=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else echo "skipped: root without setpriv cannot test read-only files"; exit 77; fi
fi

# 1. a read-only database file
mkdir -m 777 "$tmp/rw"
"$OPTBENCH" "${small[@]}" --db "$tmp/rw/ro.db" 2>/dev/null || fail "setup run failed"
chmod 444 "$tmp/rw/ro.db"; chmod 777 "$tmp/rw"
sum=$(cat "$tmp/rw/ro.db"* | md5sum)
"${as_user[@]}" "$OPTBENCH" "${small[@]}" --db "$tmp/rw/ro.db" >/dev/null 2>"$tmp/err"; rc=$?
echo "read-only file: exit $rc: $(cat "$tmp/err")"
[ $rc = 2 ] && grep -q "is read-only" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "read-only file: exit $rc, $(cat "$tmp/err")"
[ "$sum" = "$(cat "$tmp/rw/ro.db"* | md5sum)" ] || fail "the read-only database changed"

# 2. a writable database in a read-only folder (SQLite needs its -wal and -shm files)
mkdir "$tmp/rofolder"
"$OPTBENCH" "${small[@]}" --db "$tmp/rofolder/x.db" 2>/dev/null || fail "setup run failed"
chmod 666 "$tmp/rofolder/x.db"; chmod 555 "$tmp/rofolder"
"${as_user[@]}" "$OPTBENCH" "${small[@]}" --db "$tmp/rofolder/x.db" >/dev/null 2>"$tmp/err"; rc=$?
echo "read-only folder: exit $rc: $(cat "$tmp/err")"
[ $rc = 2 ] && grep -q "is not writable" "$tmp/err" || fail "read-only folder: exit $rc, $(cat "$tmp/err")"
chmod 755 "$tmp/rofolder"

# 3. a full disk: a file size limit the database outgrows mid-matrix
args=(run --workloads quadratic,rosenbrock --optimizers sgd,adam --lrs 0.01,0.1 --steps 2000 --eval-every 200
      --checkpoint-every 500 --backend cpu)
"$OPTBENCH" "${args[@]}" --db "$tmp/ref.db" 2>/dev/null || fail "reference run failed"
( ulimit -f 400; trap '' XFSZ; exec "$OPTBENCH" "${args[@]}" --db "$tmp/full.db" ) >/dev/null 2>"$tmp/err"; rc=$?
echo "full disk: exit $rc: $(tail -1 "$tmp/err")"
[ $rc = 1 ] || fail "full disk: exit status $rc (expected 1)"
grep -Eq "database or disk is full|disk I/O error|File too large|No space" "$tmp/err" || fail "full disk: unclear message: $(cat "$tmp/err")"
before=$(q "$tmp/full.db" "select count(*) from curves")
done_before=$(q "$tmp/full.db" "select count(*) from runs where status in ('done','diverged')")
echo "full disk: $done_before runs finished and $before curve points stored before the disk filled"
[ "$before" -gt 0 ] || fail "nothing was stored before the disk filled"
"$OPTBENCH" "${args[@]}" --db "$tmp/full.db" --resume 2>"$tmp/err" || fail "resume after a full disk failed: $(cat "$tmp/err")"
python3 "$here/resume_compare.py" "$tmp/ref.db" "$tmp/full.db" || fail "results differ after the full disk and resume"

# 3b. a full disk while reading: SQLite cannot make NAME-shm beside a WAL
# database; a failure of the disk (exit 1, says so), not bad input
mkdir "$tmp/rdfull"
"$OPTBENCH" "${small[@]}" --db "$tmp/rdfull/r.db" 2>/dev/null || fail "setup run failed"
( ulimit -f 20; trap '' XFSZ; exec "$OPTBENCH" history --db "$tmp/rdfull/r.db" ) >/dev/null 2>"$tmp/err"; rc=$?
echo "full disk while reading: exit $rc: $(cat "$tmp/err")"
[ $rc = 1 ] && grep -q "is the disk full" "$tmp/err" || fail "full disk while reading: exit $rc, $(cat "$tmp/err")"

# 4. an older schema version (1): migrated in place, nothing of it lost
"$OPTBENCH" "${small[@]}" --db "$tmp/old.db" --name old 2>/dev/null || fail "setup run failed"
q "$tmp/old.db" "select count(*) from benchmarks" >/dev/null
python3 - "$tmp/old.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for sql in ("ALTER TABLE benchmarks DROP COLUMN shard", "ALTER TABLE benchmarks DROP COLUMN provenance",
            "ALTER TABLE runs DROP COLUMN origin", "ALTER TABLE runs DROP COLUMN stage", "ALTER TABLE runs DROP COLUMN device_mem_bytes", "ALTER TABLE runs DROP COLUMN step_ms_mean", "ALTER TABLE runs DROP COLUMN opt_ms_median", "ALTER TABLE runs DROP COLUMN opt_ms_mean", "ALTER TABLE runs DROP COLUMN git_rev", "ALTER TABLE runs DROP COLUMN host", "ALTER TABLE runs DROP COLUMN other_cpu", "PRAGMA user_version = 1",
            "UPDATE meta SET value = '1' WHERE key = 'schema_version'"):
    db.execute(sql)
PY
[ "$(q "$tmp/old.db" "pragma user_version")" = 1 ] || fail "could not make a version-1 database"
curves_before=$(q "$tmp/old.db" "select count(*), sum(loss) from curves")
"$OPTBENCH" "${small[@]}" --db "$tmp/old.db" --name new 2>"$tmp/err" || fail "run on a version-1 database failed: $(cat "$tmp/err")"
[ "$(q "$tmp/old.db" "pragma user_version")" = 6 ] || fail "not migrated to version 6"
[ "$(q "$tmp/old.db" "select group_concat(name) from benchmarks")" = "old,new" ] || fail "benchmarks after migration: $(q "$tmp/old.db" "select name from benchmarks")"
[ "$(q "$tmp/old.db" "select count(*), sum(loss) from curves where run_id = 1")" = "$curves_before" ] || fail "the old curve changed"
echo "older schema: migrated to version $(q "$tmp/old.db" "pragma user_version"), old rows kept"

# 6. a process killed in the middle of a write (rollback-journal mode, as a
# database is while it is created): the file and its hot NAME-journal, copied
# mid-transaction. Opening it rolls the journal back to the last commit (a
# read-only connection cannot, and the file used to be refused for good).
mkdir "$tmp/hot"
"$OPTBENCH" "${small[@]}" --db "$tmp/hot/src.db" 2>/dev/null || fail "setup run failed"
python3 - "$tmp/hot" <<'PY'
import shutil, sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/src.db", isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE"); c.execute("PRAGMA cache_size=1")
c.execute("BEGIN IMMEDIATE")
c.execute("CREATE TABLE junk(x)")
for i in range(200): c.execute("INSERT INTO junk VALUES (randomblob(1000))")
shutil.copy(d + "/src.db", d + "/x.db"); shutil.copy(d + "/src.db-journal", d + "/x.db-journal")
c.execute("ROLLBACK")
PY
[ -s "$tmp/hot/x.db-journal" ] || fail "no hot journal made"
"$OPTBENCH" report --db "$tmp/hot/x.db" --out "$tmp/hot/rep" >/dev/null 2>"$tmp/err" ||
  fail "report after a killed write: $(cat "$tmp/err")"
[ "$(q "$tmp/hot/x.db" "select count(*) from sqlite_master where name = 'junk'")" = 0 ] ||
  fail "the interrupted write was not rolled back"
"$OPTBENCH" "${small[@]}" --db "$tmp/hot/x.db" --resume >/dev/null 2>"$tmp/err" ||
  fail "resume after a killed write: $(cat "$tmp/err")"
[ "$(q "$tmp/hot/x.db" "select count(*) from runs where status = 'done'")" = 1 ] || fail "the run is not kept"
echo "hot journal: rolled back, report and resume work"

# 6b. the same hot journal in a folder the reader cannot write: refused (only a
# writer can roll it back), never read as if the cut-off write had committed
mkdir "$tmp/hotro"
cp "$tmp/hot/src.db" "$tmp/hotro/x.db"
python3 - "$tmp/hotro" <<'PY'
import os, shutil, sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/x.db", isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE"); c.execute("PRAGMA cache_size=1")
c.execute("BEGIN IMMEDIATE")
c.execute("UPDATE runs SET final_loss = 1e-9")
for i in range(50): c.execute("UPDATE curves SET loss = 1e-9 WHERE step = ?", (i,))
c.execute("CREATE TABLE junk(x)")
for i in range(200): c.execute("INSERT INTO junk VALUES (randomblob(1000))")
os._exit(0)  # the write cut off: x.db-journal stays hot
PY
[ -s "$tmp/hotro/x.db-journal" ] || fail "no hot journal made (read-only folder)"
chmod 644 "$tmp/hotro"/x.db*; chmod 555 "$tmp/hotro"
"${as_user[@]}" "$OPTBENCH" report --db "$tmp/hotro/x.db" --out "$tmp/hotro-rep" --no-render >"$tmp/out" 2>"$tmp/err"; rc=$?
chmod 755 "$tmp/hotro"
[ $rc = 2 ] && grep -q "journal" "$tmp/err" && ! grep -q "1e-09" "$tmp/out" ||
  fail "a hot journal in a read-only folder: exit $rc, $(cat "$tmp/err") $(cat "$tmp/out")"
echo "hot journal in a read-only folder: $(cat "$tmp/err")"

# 7. reading a database in a read-only folder: with no NAME-wal beside it the
# readers open it immutable (SQLite could not create NAME-shm there) and
# leave the folder as it was; with a NAME-wal there, the message says what to do
mkdir "$tmp/rodb" "$tmp/rodb/out"
"$OPTBENCH" "${small[@]}" --db "$tmp/rodb/r.db" 2>/dev/null || fail "setup run failed"
[ ! -e "$tmp/rodb/r.db-wal" ] || fail "setup left r.db-wal"
copy_as_rerun "$tmp/rodb/r.db" "$tmp/rodb/r2.db" # compare's candidate (the baseline itself is no verdict)
python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('pragma wal_checkpoint(truncate)')" "$tmp/rodb/r2.db"
rm -f "$tmp/rodb/r2.db-wal" "$tmp/rodb/r2.db-shm"
chmod 644 "$tmp/rodb/r.db" "$tmp/rodb/r2.db"; chmod 555 "$tmp/rodb"; chmod 777 "$tmp/rodb/out"
sum=$(md5sum <"$tmp/rodb/r.db")
"${as_user[@]}" "$OPTBENCH" report --db "$tmp/rodb/r.db" --out "$tmp/rodb/out/rep" --no-render >/dev/null 2>"$tmp/err" ||
  fail "report of a database in a read-only folder: $(cat "$tmp/err")"
"${as_user[@]}" "$OPTBENCH" history --db "$tmp/rodb/r.db" >/dev/null 2>"$tmp/err" ||
  fail "history of a database in a read-only folder: $(cat "$tmp/err")"
"${as_user[@]}" "$OPTBENCH" compare --baseline "$tmp/rodb/r.db" --candidate "$tmp/rodb/r2.db" --time-tol off \
  >/dev/null 2>"$tmp/err" || fail "compare of a database in a read-only folder: $(cat "$tmp/err")"
[ "$(ls -A "$tmp/rodb" | tr '\n' ' ')" = "out r.db r2.db " ] || fail "the read-only folder changed: $(ls -A "$tmp/rodb")"
[ "$sum" = "$(md5sum <"$tmp/rodb/r.db")" ] || fail "the database changed"
chmod 755 "$tmp/rodb"; : >"$tmp/rodb/r.db-wal"; chmod 555 "$tmp/rodb"
"${as_user[@]}" "$OPTBENCH" report --db "$tmp/rodb/r.db" --out "$tmp/rodb/out/rep2" --no-render >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "folder is read-only" "$tmp/err" || fail "a -wal in a read-only folder: exit $rc, $(cat "$tmp/err")"
chmod 755 "$tmp/rodb"
echo "read-only folder: report, history and compare read it; with a -wal there: $(cat "$tmp/err")"

# 8. a checkpoint that cannot be read (a permission here; an I/O error
#    alike) fails the run and keeps its checkpoints and curve, where
#    skipping it would start the run over; once it can be read, --resume
#    continues from it
mkdir -m 777 "$tmp/ck"
L=(run --workloads quadratic --optimizers sgd --lrs 0.01 --steps 30000000 --checkpoint-every 5000 --backend cpu
   --db "$tmp/ck/u.db")
"${as_user[@]}" "$OPTBENCH" "${L[@]}" 2>"$tmp/err" & a=$!
for _ in $(seq 2000); do [ "$(ls "$tmp/ck/u.db.ckpt/run-1" 2>/dev/null | grep -c 'obck$')" -ge 2 ] && break; sleep 0.01; done
kill -TERM $a; wait $a
newest=$(ls "$tmp/ck/u.db.ckpt/run-1"/ckpt-*.obck | tail -1)
points=$(q "$tmp/ck/u.db" "select count(*) from curves")
chmod 000 "$newest"
# (a build that skipped it would run all 30M steps: the timeout ends that)
timeout 120 "${as_user[@]}" "$OPTBENCH" "${L[@]}" --resume 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q "cannot open it: Permission denied (the run's checkpoints and curve are kept" "$tmp/err" ||
  fail "an unreadable checkpoint: exit $rc, $(cat "$tmp/err")"
[ "$(q "$tmp/ck/u.db" "select count(*) from curves")" = "$points" ] || fail "an unreadable checkpoint: the curve changed"
[ -e "$newest" ] || fail "an unreadable checkpoint was removed"
chmod 644 "$newest"
"${as_user[@]}" "$OPTBENCH" "${L[@]}" --resume 2>"$tmp/err" & a=$!
for _ in $(seq 2000); do
  [ "$(q "$tmp/ck/u.db" "select count(*) from events where kind = 'resumed'" 2>/dev/null)" = 1 ] && break; sleep 0.01
done
kill -TERM $a; wait $a
! grep -q "no usable checkpoint\|skipping" "$tmp/err" || fail "a checkpoint readable again was not used: $(cat "$tmp/err")"
[ "$(q "$tmp/ck/u.db" "select count(*) from events where kind = 'resumed'")" = 1 ] ||
  fail "a checkpoint readable again: no resumed event: $(cat "$tmp/err")"
echo "unreadable checkpoint: the run failed and kept its curve, and continued once the file could be read"

# 9. a shared folder: another user's read left NAME-wal and NAME-shm that the
#    owner cannot write; the owner's next run says so, exit 2, and changes
#    nothing (SQLite's own words were "attempt to write a readonly database")
if [ ${#as_user[@]} -gt 0 ]; then
  owner=(setpriv --reuid=65533 --regid=65533 --clear-groups)
  mkdir -m 1777 "$tmp/shared"
  "${owner[@]}" "$OPTBENCH" "${small[@]}" --db "$tmp/shared/a.db" 2>/dev/null || fail "shared: the owner's run failed"
  "${as_user[@]}" "$OPTBENCH" history --db "$tmp/shared/a.db" >/dev/null 2>&1 || fail "shared: another user's read failed"
  sum=$(md5sum <"$tmp/shared/a.db")
  if [ -e "$tmp/shared/a.db-shm" ]; then
    "${owner[@]}" "$OPTBENCH" "${small[@]}" --db "$tmp/shared/a.db" 2>"$tmp/err"; rc=$?
    [ $rc = 2 ] && grep -q "a.db-wal' is not writable by this user (it belongs to uid 65534" "$tmp/err" &&
      grep -q "the log is empty: have '-wal' and '-shm' beside the database removed" "$tmp/err" ||
      fail "shared: the owner's run after another user's read: exit $rc, $(cat "$tmp/err")"
    [ "$sum" = "$(md5sum <"$tmp/shared/a.db")" ] || fail "shared: the database changed"
    echo "shared folder: $(cat "$tmp/err")"
  else
    echo "shared folder: the other user's read left no NAME-shm (nothing to check)"
  fi
fi

echo "$fails failed"
[ $fails -eq 0 ]
