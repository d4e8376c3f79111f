#!/usr/bin/env python3
"""scripts/mutants.py - how much of a source file the tests would notice.

usage: python3 scripts/mutants.py [--count N] [--seed S] [--lines A-B]
                                  [--tree DIR] [--timeout SECONDS]
                                  [--sanitize] [--survivors LOG]
                                  FILE TARGETS TESTS
       python3 scripts/mutants.py --list [--lines A-B] FILE

Makes small changes to FILE (a path in the repository, e.g.
results/compare.c), one at a time: a comparison turned into its neighbour
(< and <=, > and >=, == and !=), && and || swapped, + and - swapped, a + 1
or - 1 dropped, ++ into --, 0.5 into 0.25, fabs( dropped, a return of 0,
1, -1, true or false into its opposite, and a statement of one line (a
call or an assignment, not a release such as free) skipped, written
if (0) { ... }. Each such mutant
is built (the make TARGETS, comma-separated: the program and the test
binaries that TESTS need) and the tests whose ctest names match the
regular expression TESTS are run, as many at once as there are cores; a
test that fails kills the mutant, a mutant that every test passes
survives. A survivor is a change the tests would not see: either a gap in
them, or an equivalent change (a bound that no input reaches, an
allocation's slack, an out-of-memory path) - read each.

It works on a copy, a git worktree of HEAD in a new temporary folder
(beside it a link to the conformance cases of ../shared where the
repository has them, as cli_golden looks for them there), removed at the
end (--tree DIR: a worktree made at DIR and kept, or, where
DIR is one already, used as it is, its build reused), built in its
build-mutants/ with the CPU backend (Release, -DOB_CUDA=OFF): all of it
before the first mutant, the TARGETS for each; the checkout itself is not
touched. N mutants
(default 40) are drawn from every candidate site with the seed S (default
1), optionally only from lines A to B. Comments, preprocessor lines and
lines that format messages are left alone. A mutant's tests that run
past --timeout seconds (default: three times as long as on the unchanged
tree, 30 s at least; a mutant can loop for ever) kill it.

--sanitize builds with AddressSanitizer and UndefinedBehaviorSanitizer
(-DOB_SANITIZE=ON, RelWithDebInfo, in build-mutants-san/, with
scripts/test-sanitize.sh's settings): a mutant that reads past an array or
overflows is then killed by the report it causes, where the Release build
may pass every test (slower: use it on the survivors). --survivors LOG
takes the mutants a LOG of an earlier run (this program's output) says
survived, instead of a draw (each found by its text, at the site nearest
its line: lines added above it since move it): e.g. the Release run's
survivors again under --sanitize.

--list prints the candidate sites of FILE (any C file), one mutant a
line, and builds nothing.

Prints one line per mutant (kill, SURV, or NC where it does not compile)
and the counts; exit status 0 once it has run, 2 for bad arguments.

Example: python3 scripts/mutants.py --count 20 results/compare.c \
             optbench,test_compare 'test_compare|cli_compare$' > m.log
         python3 scripts/mutants.py --sanitize --survivors m.log \
             results/compare.c optbench,test_compare 'test_compare|cli_compare$'
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

OPS = [
    (r"<=", "<"), (r"(?<![<\-])<(?![<=])", "<="), (r">=", ">"),
    (r"(?<![>\-])>(?![>=])", ">="), (r"==", "!="), (r"!=", "=="),
    (r"&&", "||"), (r"\|\|", "&&"), (r" \+ ", " - "), (r" - ", " + "),
    (r"\+ 1\b", "+ 0"), (r"- 1\b", "- 0"), (r"\b0\.5\b", "0.25"),
    (r"\bfabs\(", "("), (r"\+\+", "--"),
]
MESSAGE = re.compile(r"\b(fprintf|snprintf|printf|ob_err\w*)\s*\(")
# a statement of one line that a mutant can skip: a call or an assignment
# (not a declaration: a type name is followed by a name, not by one of these)
STATEMENT = re.compile(r"^\*?[A-Za-z_]\w*(\s*(\.|->)\s*\w+|\[[^\]]*\])*\s*"
                       r"(\(|=(?!=)|\+=|-=|\*=|/=|\|=|&=|\+\+|--)")
# releases are left alone: skipping one leaks, which only a leak checker sees
RELEASE = re.compile(r"^(free|va_start|va_end|va_copy|sqlite3_finalize|sqlite3_close(_v2)?|fclose|close|closedir|"
                     r"munmap|\w+_free|\w+_destroy|\w+_close)\s*\(")
KEYWORDS = {"return", "break", "continue", "goto", "if", "for", "while", "do", "switch", "case", "sizeof",
            "else", "default"}
# a return of a constant into its opposite (a flag, a found/not-found answer)
RETURNS = [(r"\breturn 0;", "return 1;"), (r"\breturn 1;", "return 0;"), (r"\breturn true;", "return false;"),
           (r"\breturn false;", "return true;"), (r"\breturn -1;", "return 0;")]


def code_positions(lines):
    """For each line, the positions outside comments and string and
    character literals (a comment can span lines; a literal cannot)."""
    out, in_comment = [], False
    for line in lines:
        ok, quote, i = set(), None, 0
        while i < len(line):
            if in_comment:
                if line.startswith("*/", i):
                    in_comment = False
                    i += 2
                    continue
            elif quote:
                if line[i] == "\\":
                    i += 2
                    continue
                if line[i] == quote:
                    quote = None
            elif line[i] in "\"'":
                quote = line[i]
            elif line.startswith("/*", i):
                in_comment = True
                i += 2
                continue
            elif line.startswith("//", i):
                break
            else:
                ok.add(i)
            i += 1
        out.append(ok)
    return out


def sites(lines, lo, hi):
    """Every (line number, start, end, replacement) a mutant can take."""
    out = []
    for ln, (line, ok) in enumerate(zip(lines, code_positions(lines)), 1):
        s = line.strip()
        if not ok or s.startswith("#") or not lo <= ln <= hi or MESSAGE.search(s):
            continue
        for pat, rep in OPS + RETURNS:
            for m in re.finditer(pat, line):
                if m.start() in ok:
                    out.append((ln, m.start(), m.end(), rep))
        site = skippable(ln, line, ok)
        if site:
            out.append(site)
    return out


def skippable(ln, line, ok):
    """Where line (number ln) is one whole statement (a call or an
    assignment) a mutant can skip, its site: the statement kept, for the
    log to name, inside if (0) { ... }; otherwise None."""
    s = line.strip()
    start = len(line) - len(line.lstrip())
    code = "".join(c for i, c in enumerate(line) if i in ok)
    if not STATEMENT.match(s) or RELEASE.match(s) or re.match(r"\w+", s.lstrip("*")).group(0) in KEYWORDS or \
            not code.rstrip().endswith(";") or code.count("(") != code.count(")") or \
            code.count(";") != 1 or "{" in code or "}" in code:
        return None
    end = len(line.rstrip())
    return (ln, start, end, "if (0) { " + line[start:end] + " }")


def mutant_line(lines, site):
    ln, s, e, rep = site
    return lines[ln - 1][:s] + rep + lines[ln - 1][e:]


def mutant_text(lines, site):
    """How a mutant is printed (and found again by --survivors)."""
    return mutant_line(lines, site).strip()


def survivors(log, file):
    """The (line, text) of each mutant of file that log says survived."""
    out = set()
    for m in re.finditer(r"^  SURV (\S+):(\d+): (.*?)   \(\d+ s\)$", log, re.M):
        if m.group(1) == file:
            out.add((int(m.group(2)), m.group(3)))
    return out


def find_sites(lines, cand, wanted):
    """The sites of the mutants wanted, (line, text) pairs: each the site
    whose mutant has that text, nearest that line (the file may have
    changed above it since), sorted."""
    out = set()
    for ln, text in wanted:
        same = [c for c in cand if mutant_text(lines, c) == text]
        if same:
            out.add(min(same, key=lambda c: (abs(c[0] - ln), c[0])))
    return sorted(out)


def sanitizer_env(tree):
    """scripts/test-sanitize.sh's settings: any report fails the test."""
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1:strict_string_checks=1:"
                          "detect_stack_use_after_return=1")
    os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    supp = os.path.join(tree, "tests", "sanitize.supp")
    if os.path.isfile(supp):
        os.environ.setdefault("LSAN_OPTIONS", f"suppressions={supp}:print_suppressions=0")


def run(cmd, cwd, timeout, log=None):
    """cmd's exit status; 124 when it ran past timeout seconds (its whole
    process group killed: ctest's children too)."""
    with open(log or os.devnull, "w") as f:
        p = subprocess.Popen(cmd, shell=True, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return 124


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage=__doc__.split("\n\n", 2)[1].replace("usage: ", "", 1))
    ap.add_argument("file", help="the source file, as a path in the repository (--list: any C file)")
    ap.add_argument("targets", nargs="?", help="make targets to rebuild per mutant, comma-separated")
    ap.add_argument("tests", nargs="?", help="ctest -R regular expression of the tests to run")
    ap.add_argument("--list", action="store_true", help="print the candidate sites and build nothing")
    ap.add_argument("--count", type=int, default=40, help="mutants to draw (default 40)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the draw (default 1)")
    ap.add_argument("--lines", default=None, help="A-B: only lines A to B")
    ap.add_argument("--tree", default=None, help="worktree folder (default: a temporary one)")
    ap.add_argument("--timeout", type=int, default=0,
                    help="seconds for a mutant's tests (default: 3 times the unchanged tree's, 30 at least)")
    ap.add_argument("--sanitize", action="store_true",
                    help="build with ASan and UBSan (-DOB_SANITIZE=ON) in build-mutants-san/")
    ap.add_argument("--survivors", default=None, metavar="LOG",
                    help="the mutants an earlier run's LOG says survived, instead of a draw")
    a = ap.parse_args()
    lo, hi = 1, 10**9
    if a.lines:
        try:
            lo, hi = (int(x) for x in a.lines.split("-"))
        except ValueError:
            print(f"mutants.py: --lines {a.lines}: expected A-B, e.g. 100-250", file=sys.stderr)
            return 2
    if a.list:
        try:
            lines = open(a.file).read().split("\n")
        except OSError as err:
            print(f"mutants.py: {a.file}: {err.strerror}", file=sys.stderr)
            return 2
        for ln, s, e, rep in sites(lines, lo, hi):
            print(f"{a.file}:{ln}: {lines[ln - 1][:s] + rep + lines[ln - 1][e:]}".rstrip())
        return 0
    if not a.targets or not a.tests:
        print("mutants.py: FILE TARGETS TESTS expected (or --list FILE); see --help", file=sys.stderr)
        return 2
    wanted = None
    if a.survivors:
        try:
            wanted = survivors(open(a.survivors).read(), a.file)
        except OSError as err:
            print(f"mutants.py: --survivors {a.survivors}: {err.strerror}", file=sys.stderr)
            return 2
        if not wanted:
            print(f"mutants.py: --survivors {a.survivors}: no survivor of {a.file} in it (lines "
                  f"'  SURV {a.file}:LINE: TEXT')", file=sys.stderr)
            return 2
    repo = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=os.path.dirname(os.path.abspath(__file__)),
                          capture_output=True, text=True).stdout.strip()
    if not os.path.isfile(os.path.join(repo, a.file)):
        print(f"mutants.py: {a.file}: no such file in the repository", file=sys.stderr)
        return 2
    targets = " ".join(t for t in a.targets.split(",") if t)
    own_tree = a.tree is None
    top = None if a.tree else tempfile.mkdtemp(prefix="optbench-mutants-")
    tree = a.tree or os.path.join(top, "main")
    if top and os.path.isdir(os.path.join(repo, "..", "shared")):
        # the conformance cases where the tests look for them, beside the tree
        os.symlink(os.path.abspath(os.path.join(repo, "..", "shared")), os.path.join(top, "shared"))
    build = os.path.join(tree, "build-mutants-san" if a.sanitize else "build-mutants")
    if not os.path.isdir(os.path.join(tree, ".git")) and not os.path.isfile(os.path.join(tree, ".git")):
        if run(f"git worktree add -q --detach '{tree}' HEAD", repo, 300) != 0:
            print(f"mutants.py: cannot make a worktree at {tree}", file=sys.stderr)
            return 2
    path = os.path.join(tree, a.file)
    orig = open(path).read()
    # a kill (SIGTERM, SIGHUP) restores the file as an interrupt does
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    try:
        os.makedirs(build, exist_ok=True)
        log = os.path.join(build, "mutants-build.log")
        flags = "-DOB_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" if a.sanitize else "-DCMAKE_BUILD_TYPE=Release"
        if a.sanitize:
            sanitizer_env(tree)
        if run(f"cmake -S . -B '{build}' -DOB_CUDA=OFF {flags}", tree, 600, log) != 0 or \
                run(f"make -j{os.cpu_count()}", build, 3600, log) != 0:
            print(f"mutants.py: the unchanged tree does not build (see {log})", file=sys.stderr)
            return 2
        t0 = time.time()
        if run(f"ctest -j{os.cpu_count()} -R '{a.tests}'", build, 3600) != 0:
            print("mutants.py: the tests fail on the unchanged tree", file=sys.stderr)
            return 2
        timeout = a.timeout or max(30, 3 * (time.time() - t0))
        lines = orig.split("\n")
        cand = sites(lines, lo, hi)
        if wanted is not None:
            cand = find_sites(lines, cand, wanted)
            missing = len(wanted) - len(cand)
            if missing:
                print(f"mutants.py: {missing} of the survivors in {a.survivors} are not sites of {a.file} "
                      f"as it is now (changed since?): left out", file=sys.stderr)
        else:
            random.Random(a.seed).shuffle(cand)
            cand = sorted(cand[:a.count])
        print(f"{a.file}: {len(cand)} mutants of {len(sites(lines, lo, hi))} sites, tests '{a.tests}'", flush=True)
        counts = {"kill": 0, "SURV": 0, "NC": 0}
        for ln, s, e, rep in cand:
            mutated = mutant_line(lines, (ln, s, e, rep))
            new = lines[:]
            new[ln - 1] = mutated
            with open(path, "w") as f:
                f.write("\n".join(new))
            t0 = time.time()
            if run(f"make -j{os.cpu_count()} {targets}", build, 3600) != 0:
                tag = "NC"
            else:
                # the first failing test kills the mutant: the rest need not run
                tag = "kill" if run(f"ctest -j{os.cpu_count()} --stop-on-failure -R '{a.tests}'",
                                    build, timeout) != 0 else "SURV"
            counts[tag] += 1
            print(f"  {tag:4} {a.file}:{ln}: {mutated.strip()}   ({time.time() - t0:.0f} s)", flush=True)
        n = counts["kill"] + counts["SURV"]
        print(f"{a.file}: {counts['kill']} killed, {counts['SURV']} survived, {counts['NC']} did not compile"
              + (f" ({100 * counts['kill'] / n:.0f}% killed)" if n else ""))
    finally:
        with open(path, "w") as f:
            f.write(orig)
        if not own_tree:  # a tree kept: its binaries the unchanged file's again
            run(f"make -j{os.cpu_count()} {targets}", build, 3600)
        if own_tree:
            run(f"git worktree remove --force '{tree}'", repo, 300)
            shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
