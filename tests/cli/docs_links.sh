#!/usr/bin/env bash
# The manual's links: README.md, CHANGES.md and docs/*.md link only to files
# and headings that exist, README.md links every page of docs/, and the
# source files the pages name exist (docs_links.py).
. "$(dirname "$0")/common.bash"
: "${OB_SOURCE_DIR:?}"
check "the manual's links and file names" python3 "$here/docs_links.py" "$OB_SOURCE_DIR"
# the checker itself: a broken link and a missing file are found
mkdir -p "$tmp/m/docs"
printf '[a](docs/a.md#nowhere) `core/none.c`\n' >"$tmp/m/README.md"
printf '# A\n[b](missing.md)\n' >"$tmp/m/docs/a.md"
printf '# B\n' >"$tmp/m/docs/b.md"
: >"$tmp/m/CHANGES.md"
out=$(python3 "$here/docs_links.py" "$tmp/m")
rc=$?
check "a broken manual fails (rc $rc)" test "$rc" -eq 1
for want in 'has no heading or anchor "nowhere"' 'missing.md: no such file' 'names core/none.c' 'no link to docs/b.md'; do
  check "the checker says: $want" grep -qF "$want" <<<"$out"
done
exit $fail
