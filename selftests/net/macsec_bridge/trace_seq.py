#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel's own record of a row, from the trace buffer.

    trace_seq.py TRACE NAMES ANNOUNCED

TRACE is a copy of tracefs' `trace` (trace_clock `counter`: one order
across CPUs). It holds macsec_bridge's events and the model NIC's lines:

    macsec_bridge_announce: ifindex=7 generation=3 protection=none reason=secy-down
    macsec_bridge_feature: ifindex=7 hw-macsec=off [deferred]
    macsec_test_nic: mdo_dev_stop enter | macsec_test_nic: mdo_dev_stop exit 0
    macsec_test_nic: tx-rule sa0 | macsec_test_nic: tx-rule none

Prints one line: the row's tokens in order, `PORT:PROTECTION/REASON` for an
announcement, `PORT:bit-on`/`PORT:bit-off` for a feature write
(`...-deferred` when left to the deferred writer), `mdo_x` when the driver
is called, `ret=N` when it returns, and `tx:saN`/`tx:none` when the model
NIC installs the TX rule of SA N, or removes its rule. Statistics
operations (mdo_get_*) change nothing and are left out. NAMES maps
ifindexes to names (lines `IFINDEX NAME`, the last one for an ifindex
counts); an unknown one prints as `if<N>`. Every announcement is also
appended to ANNOUNCED as `NAME GENERATION PROTECTION REASON`.
"""

import re
import sys

EVENT = re.compile(r'macsec_bridge_(announce|feature): ifindex=(\d+) (.*)$')
NIC = re.compile(r'macsec_test_nic: (\w+) (enter|exit (-?\d+))\s*$')
RULE = re.compile(r'macsec_test_nic: tx-rule (\w+)\s*$')


def main():
    trace, names_path, announced = sys.argv[1:4]
    names = {}
    with open(names_path) as f:
        for line in f:
            ifindex, name = line.split()
            names[ifindex] = name
    tokens, notes = [], []
    with open(trace) as f:
        for line in f:
            if line.startswith('#'):
                continue
            m = EVENT.search(line)
            if m:
                kind, ifindex, rest = m.groups()
                name = names.get(ifindex, f'if{ifindex}')
                fields = dict(kv.split('=', 1) for kv in rest.split() if '=' in kv)
                if kind == 'announce':
                    tokens.append(f"{name}:{fields['protection']}/{fields['reason']}")
                    notes.append(f"{name} {fields['generation']} {fields['protection']} "
                                 f"{fields['reason']}")
                else:
                    bit = 'bit-' + fields['hw-macsec']
                    tokens.append(f'{name}:{bit}' + ('-deferred' if 'deferred' in rest else ''))
                continue
            m = RULE.search(line)
            if m:
                tokens.append(f'tx:{m.group(1)}')
                continue
            m = NIC.search(line)
            if m:
                op, phase, ret = m.groups()
                if op.startswith('mdo_get_'):
                    continue
                tokens.append(op if phase == 'enter' else f'ret={ret}')
    with open(announced, 'a') as f:
        for n in notes:
            f.write(n + '\n')
    print(' '.join(tokens))


if __name__ == '__main__':
    main()
