#!/usr/bin/env python3
"""The manual's links and file names: every relative link of README.md,
CHANGES.md and docs/*.md reaches a file of the source tree, and a link's
#anchor a heading (GitHub's slug) or an <a id> of that file; every page of
docs/ is linked from README.md; every source file a page names in code
spans (`kernels/cpu/conv_direct.c`) exists, but for the placeholder x of
docs/extending.md (`optimizers/x.c`). Prints each problem; exits 1
if there is any."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
TOP = ('core', 'kernels', 'optimizers', 'workloads', 'results', 'plots', 'harness',
       'scripts', 'configs', 'tests', 'fuzz', 'perf', 'cmake', 'docs')


def slug(title):
    s = re.sub(r'[^\w\- ]', '', title.strip().lower())
    return s.replace(' ', '-')


def strip_fences(text):
    return re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)


def anchors(path):
    text = strip_fences(open(path, encoding='utf-8').read())
    found = {slug(m) for m in re.findall(r'^#{1,6} (.*)$', text, flags=re.M)}
    return found | set(re.findall(r'<a id="([^"]+)"></a>', text))


pages = ['README.md', 'CHANGES.md'] + sorted(
    os.path.join('docs', f) for f in os.listdir(os.path.join(root, 'docs')) if f.endswith('.md'))
problems = []
linked = set()
for page in pages:
    text = open(os.path.join(root, page), encoding='utf-8').read()
    prose = strip_fences(text)
    base = os.path.dirname(page)
    for target in re.findall(r'\]\(([^)\s]+)\)', prose):
        if re.match(r'[a-z]+:', target):
            continue
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(base, path)) if path else page
        linked.add((page, dest))
        if not os.path.exists(os.path.join(root, dest)):
            problems.append('%s: link to %s: no such file' % (page, target))
        elif anchor and dest.endswith('.md') and anchor not in anchors(os.path.join(root, dest)):
            problems.append('%s: link to %s: %s has no heading or anchor "%s"' % (page, target, dest, anchor))
    for name in set(re.findall(r'`((?:%s)/[\w./-]+\.(?:c|h|cu|cuh|sh|py|yaml|gp|txt|md|cmake))`' % '|'.join(TOP), text)):
        if os.path.basename(name).startswith('x.'):
            continue
        if not os.path.exists(os.path.join(root, name)):
            problems.append('%s: names %s, which does not exist' % (page, name))
for page in pages[2:]:
    if ('README.md', page) not in linked:
        problems.append('README.md: no link to %s' % page)
for p in problems:
    print('FAIL:', p)
print('%d pages, %d problems' % (len(pages), len(problems)))
sys.exit(1 if problems else 0)
