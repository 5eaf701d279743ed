#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lockstep tables' judge (selftests/.../lockstep_check.py) on made-up
# rows, without a VM: a row that agrees with every view passes, and each
# kind of disagreement it is there to catch fails that row, saying why.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "$top/selftests/net/macsec_bridge/lockstep_check.py" <<'PY'
import copy, json, os, subprocess, sys, tempfile

check = sys.argv[1]
PORT = {'ifindex': 7, 'ifname': 'macsec0', 'rdma-dev': ['mb_rxe0'], 'protection': 'offload-mac',
        'reason': 'none', 'relation': 'self', 'secy-ifindex': 7, 'sci': 0x5254001234560004,
        'cipher': 'gcm-aes-xpn-256', 'encrypt': 1, 'validate': 'strict', 'rx-plaintext': 1,
        'feature-owner': 'bridge', 'generation': 1}
SECY = {'ifindex': 7, 'ifname': 'macsec0', 'flags': ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
        'linkinfo': {'info_kind': 'macsec', 'info_data': {
            'sci': '5254001234560004', 'protect': True, 'cipher_suite': 'GCM-AES-XPN-256',
            'encrypt': True, 'validation': 'strict', 'offload': 'mac'}}}
RDMA = [{'ifindex': 1, 'ifname': 'mb_rxe0', 'netdev': 'macsec0', 'netdev_index': 7}]


def bed():
    """Row 1: the port appears, offloaded; row 2: nothing changes."""
    return copy.deepcopy({'dump.1': [PORT], 'dump.2': [dict(PORT)], 'ntf': [dict(PORT)],
                          'oracle': {'links': {'': [{}, SECY]}, 'nsids': [], 'rdma': RDMA},
                          'validate': '-'})


def judge(b):
    with tempfile.TemporaryDirectory() as d:
        def put(name, v):
            with open(os.path.join(d, name), 'w') as f:
                json.dump(v, f)
        put('dump.0', [])
        for n in (1, 2):
            put(f'dump.{n}', b[f'dump.{n}'])
            put(f'oracle.{n}', b['oracle'])
        put('ntf', [{'name': 'dev-change-ntf', 'msg': m} for m in b['ntf']])
        with open(os.path.join(d, 'rows'), 'w') as f:
            f.write('1\tappears\tmacsec0\ton\ton\toffload-mac\t-\tself\tbridge\t0\t=offload-mac/none'
                    f'\t{b["validate"]}\n')
            f.write('2\tstill\tmacsec0\ton\ton\toffload-mac\t-\tself\tbridge\t0\t=\n')
        return subprocess.run([sys.executable, check, d], capture_output=True, text=True).stdout


def case(desc, change, want):
    b = bed()
    change(b)
    out = judge(b)
    failed = [l for l in out.splitlines() if l.startswith('FAIL')]
    if want is None:
        ok = not failed
    else:
        ok = bool(failed) and want in out
    print(f'{"PASS" if ok else "FAIL"}: {desc}')
    if not ok:
        print(''.join(f'  {l}\n' for l in out.splitlines()), end='')
    return ok


def info(b):
    return b['oracle']['links'][''][1]['linkinfo']['info_data']


def dumped(b, key, value, rows=(1, 2)):
    for n in rows:
        b[f'dump.{n}'][0][key] = value


def everywhere(b, key, value):
    for o in (b['dump.1'][0], b['dump.2'][0], b['ntf'][0]):
        if value is None:
            o.pop(key, None)
        else:
            o[key] = value


results = [
    case('every view agrees: every row passes', lambda b: None, None),
    case('ip says another SCI', lambda b: info(b).update(sci='5254001234560005'), 'sci '),
    case('ip says another cipher suite',
         lambda b: info(b).update(cipher_suite='GCM-AES-256'), 'cipher '),
    case('ip says encrypt off', lambda b: info(b).update(encrypt=False), 'encrypt '),
    case('offload-mac on a SecY not offloaded', lambda b: info(b).update(offload='off'),
         'offload-mac on a SecY with offload off'),
    case('offload-mac on a SecY that is down',
         lambda b: b['oracle']['links'][''][1].update(flags=['BROADCAST']), 'is down'),
    case('no MACsec link with that ifindex',
         lambda b: b['oracle']['links'].update({'': []}), 'no MACsec link'),
    case('ip says validate check, the object strict',
         lambda b: info(b).update(validation='check'), 'validate strict, ip check'),
    case('the object weaker than ip (after a refused change): passes',
         lambda b: everywhere(b, 'validate', 'check'), None),
    case('validate without encrypt', lambda b: everywhere(b, 'encrypt', None),
         'validate with encrypt None'),
    case('encrypt and rx-plaintext without validate',
         lambda b: everywhere(b, 'validate', None), 'validate without encrypt 1'),
    case('rx-plaintext 0 on a driver without metadata dst',
         lambda b: everywhere(b, 'rx-plaintext', 0), 'rx-plaintext 0'),
    case('the row wants validate check', lambda b: b.update(validate='check'),
         'dump: validate strict, want check'),
    case('rdma link names another RDMA device',
         lambda b: b['oracle']['rdma'][0].update(ifname='mb_rxe9'), 'rdma-dev'),
    case('a notification without the sci its verdict needs',
         lambda b: b['ntf'][0].pop('sci'), 'offload without sci'),
    case('the last notification differs from the dump (cipher)',
         lambda b: b['ntf'][0].update(cipher='gcm-aes-128'), 'last notification: cipher'),
    case('a field changed, the generation did not',
         lambda b: dumped(b, 'rdma-dev', ['mb_rxe1'], rows=(2,)), 'generation unchanged'),
    case('the dump without a field every object has',
         lambda b: [b[f'dump.{n}'][0].pop('feature-owner', None) for n in (1, 2)],
         'no feature-owner'),
    case('a port the SecY carries whole lists protected GIDs',
         lambda b: [o.update({'protected-gid': [{'rdma-dev': 'mb_rxe0', 'index': 1,
                                                 'gid': '0000:0000:0000:0000:0000:ffff:c000:0201'}]})
                    for o in (b['dump.1'][0], b['dump.2'][0], b['ntf'][0])],
         'protected-gid with relation self'),
]
print(f'{sum(results)} of {len(results)} cases as expected')
sys.exit(0 if all(results) else 1)
PY
