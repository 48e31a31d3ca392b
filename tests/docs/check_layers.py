#!/usr/bin/env python3
"""The include rules of doc/internals.md ("Layers and what each may include"): every quoted
#include in lib/ names a header its layer may use. Exit 1 with the offending lines."""
import os
import re
import sys

root = sys.argv[1]
lib = os.path.join(root, 'lib')
PUBLIC = ('atomicity/', 'atomicity.h')
# layer -> prefixes a quoted include may start with (besides the public headers)
RULES = {
    'support': ('support/',),
    'core': ('core/', 'support/', 'checkers/list.def', 'checkers/builtin.h'),
    'checkers': ('support/', 'checkers/builtin.h', 'checkers/list.def'),
    'trace': ('trace/', 'support/', 'core/error.h', 'core/push_vouched.h'),
    'output': ('output/', 'core/', 'support/'),
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
bad = []
checked = 0
for layer, allowed in RULES.items():
    for dirpath, _, files in os.walk(os.path.join(lib, layer)):
        for name in files:
            if not name.endswith(('.c', '.h', '.def')):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, lib)
            own = os.path.dirname(rel) + '/'  # a checker's folder may include its own headers
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    checked += 1
                    inc = m.group(1)
                    ok = inc.startswith(PUBLIC) or inc.startswith(allowed)
                    if layer == 'checkers' and own != 'checkers/' and inc.startswith(own):
                        ok = True
                    if not ok:
                        bad.append(f'lib/{rel}:{n}: the {layer} layer may not include "{inc}"')
# The public headers include only public headers.
for dirpath, _, files in os.walk(os.path.join(root, 'include')):
    for name in files:
        path = os.path.join(dirpath, name)
        with open(path, encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m:
                    checked += 1
                    if not m.group(1).startswith(PUBLIC):
                        bad.append(f'{os.path.relpath(path, root)}:{n}: a public header may not '
                                   f'include "{m.group(1)}"')
if bad:
    print('\n'.join(bad))
    sys.exit(1)
print(f'layers: {checked} includes checked, all allowed')
