#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The YNL spec as a new family is written upstream
# (Documentation/userspace-api/netlink/specs.rst of the kernel the module
# is built for):
# - the family name is hyphenated, lowercase: no '_' (as net-shaper);
# - the protocol is "genetlink", which "should be used by all new
#   families" (genetlink-c only adds C name customisations);
# - no integer narrower than 32 bits ("should be avoided");
# - a 64-bit value is a common integer (uint/sint, never padded) unless its
#   width is part of its meaning, which the spec says with a byte-order (an
#   SCI in network order); a pad attribute exists if and only if such a
#   fixed-width 64-bit attribute does.
#
#   scripts/tests/spec_style.sh [SPEC]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
spec=${1:-$top/Documentation/netlink/specs/macsec_bridge.yaml}

python3 - "$spec" <<'EOF'
import re
import sys

import yaml

spec = yaml.safe_load(open(sys.argv[1]))
bad = []
name = spec.get('name', '')
if not re.fullmatch(r'[a-z][a-z0-9]*(-[a-z0-9]+)*', name):
    bad.append(f'family name {name!r} is not lowercase and hyphenated')
if spec.get('protocol', 'genetlink') != 'genetlink':
    bad.append(f"protocol {spec.get('protocol')!r}, not genetlink")
fixed64 = []
pads = []
attrs = 0
for aset in spec.get('attribute-sets', []):
    for a in aset.get('attributes', []):
        attrs += 1
        where = f"{aset['name']}/{a['name']}"
        t = a.get('type')
        if t in ('u8', 'u16', 's8', 's16'):
            bad.append(f'{where}: {t}, narrower than 32 bits')
        elif t in ('u64', 's64'):
            if 'byte-order' in a:
                fixed64.append(where)
            else:
                bad.append(f'{where}: {t} for a plain number (uint/sint)')
        elif t == 'pad':
            pads.append(where)
if attrs == 0:
    bad.append('no attributes read: not a genetlink spec?')
if bool(pads) != bool(fixed64):
    bad.append(f'pad attributes {pads} for fixed-width 64-bit ones {fixed64}')
for b in bad:
    print(f'FAIL: {b}')
if bad:
    sys.exit(1)
print(f'ok: {name}: {attrs} attributes as new families are written '
      f'({len(fixed64)} fixed-width 64-bit, with a pad)')
EOF
