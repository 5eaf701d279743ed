#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge the rows of a lockstep table (see row() in lib.sh).

    lockstep_check.py ROW_DIR

ROW_DIR holds `dump.0` (the ports when the table began), `oracle.N` (the
kernel's other interfaces after row N: MACsec links per namespace, RDMA
links; see table_oracle in lib.sh), `rows` (one
tab-separated line per row: number, description,
port, expected bit, ethtool's bit, expected protection, expected reason,
expected relation (`none`: no relation), expected owner, action
status, and `-` or `=` followed by the expected notifications), `dump.N` (the
`cli.py --dump dev-get` after row N), `action.N` (its output) and `ntf`
(everything `cli.py --subscribe monitor` received during the table).

A row passes when all three views agree with the expectation:
- ethtool's `macsec-hw-offload` is the expected value;
- the dump shows the port (or not, for `absent`) with the expected
  protection, reason, relation and feature owner;
- the notifications: if the object changed, its generation grew and the
  port's notifications in between are strictly increasing, the last equal to
  the dump; if nothing changed, the generation is the same and no
  notification came; a port that went away got a last notification
  retracting its protection (`reason unknown`: no longer tracked);
- where the row states them, the port's notifications during the row are
  exactly the expected ones, in order (protection/reason each): a row
  that retracts and restores, or flaps, shows it here;
- every field: each notification and the dump carry what every object
  carries (and an offload verdict its SecY's sci, cipher and encrypt);
  the last notification equals the dump in every field; a row that
  changes nothing leaves every field as it was; and the SecY fields and
  `rdma-dev` are what the kernel says elsewhere (`ip -d link` for the SecY
  the object names, `rdma link` for the port), and an offload verdict
  stands on a SecY that is up, offloaded where it claims (MAC or PHY),
  protecting and encrypting.

Generations are one clock shared by all ports, so finally: every
generation handed out while the monitor listened was notified exactly once
(the notified generations are unique and contiguous).

Prints `PASS<TAB>description` or `FAIL<TAB>description` per row, with
`# ...` diagnostics before a failure.
"""

import json
import os
import sys


def load(path, default):
    try:
        with open(path) as f:
            text = f.read().strip()
    except FileNotFoundError:
        return default
    try:
        return json.loads(text) if text else default
    except json.JSONDecodeError:
        return default


# What every object carries, and what one that claims offload carries too.
ALWAYS = ('ifindex', 'ifname', 'protection', 'reason', 'feature-owner', 'generation')
OFFLOAD = ('relation', 'secy-ifindex', 'sci', 'cipher', 'encrypt', 'validate', 'rx-plaintext')
# iproute2's cipher suite names, as the spec's.
VALIDATE = ['disabled', 'check', 'strict']
CIPHERS = {'GCM-AES-128': 'gcm-aes-128', 'GCM-AES-256': 'gcm-aes-256',
           'GCM-AES-XPN-128': 'gcm-aes-xpn-128', 'GCM-AES-XPN-256': 'gcm-aes-xpn-256'}


def shape(o):
    """What is missing from, or out of place in, object O."""
    errors = [f'no {k}' for k in ALWAYS if k not in o]
    if str(o.get('protection', '')).startswith('offload'):
        errors += [f'offload without {k}' for k in OFFLOAD if k not in o]
    if 'secy-ifindex' not in o:
        errors += [f'{k} without secy-ifindex' for k in ('sci', 'cipher', 'encrypt', 'secy-netnsid',
                                                         'validate', 'rx-plaintext') if k in o]
    # Both known exactly where encrypt is: an observed, offloaded SecY.
    for k in ('validate', 'rx-plaintext'):
        if (k in o) != ('encrypt' in o):
            errors.append(f"{k} {'with' if k in o else 'without'} encrypt {o.get('encrypt')}")
    # GIDs are listed only where the SecY protects part of the port.
    if o.get('protected-gid') and o.get('reason') != 'partial':
        errors.append(f"protected-gid with relation {o.get('relation')}, reason {o.get('reason')}")
    return errors


def secy_links(oracle, o):
    """The MACsec links the object's secy-ifindex can name: in this
    namespace, or in the one its secy-netnsid names."""
    links = oracle.get('links') or {}
    if 'secy-netnsid' in o:
        names = [n.get('name') for n in oracle.get('nsids') or []
                 if n.get('nsid') == o['secy-netnsid']]
        spaces = [links[n] for n in names if n in links]
        if not spaces:  # an id this namespace has, for an unnamed one
            spaces = [v for k, v in links.items() if k]
    else:
        spaces = [links.get('')]
    return [l for sp in spaces for l in sp or []
            if l.get('ifindex') == o['secy-ifindex'] and 'linkinfo' in l]


def against_oracle(oracle, o):
    """Where object O disagrees with the kernel's other interfaces."""
    errors = []
    if 'secy-ifindex' in o:
        verdicts = []
        for link in secy_links(oracle, o):
            info = link['linkinfo'].get('info_data') or {}
            wrong = []
            if 'sci' in o and int(info.get('sci', '-1'), 16) != o['sci']:
                wrong.append(f"sci {o['sci']:016x}, ip {info.get('sci')}")
            if 'cipher' in o and CIPHERS.get(info.get('cipher_suite')) != o['cipher']:
                wrong.append(f"cipher {o['cipher']}, ip {info.get('cipher_suite')}")
            if 'encrypt' in o and bool(info.get('encrypt')) != bool(o['encrypt']):
                wrong.append(f"encrypt {o['encrypt']}, ip {info.get('encrypt')}")
            # Never stronger than in force (after a refused change, the
            # weaker of the two stays until the next operation).
            if 'validate' in o and (VALIDATE.index(o['validate'])
                                    > VALIDATE.index(info.get('validation', 'disabled'))):
                wrong.append(f"validate {o['validate']}, ip {info.get('validation')}")
            # No driver of the test beds marks what it decrypted (mlx5e
            # alone does): macsec.c may hand each SecY plaintext.
            if o.get('rx-plaintext', 1) != 1:
                wrong.append(f"rx-plaintext {o['rx-plaintext']} on a driver without metadata dst")
            if o['protection'] in ('offload-mac', 'offload-phy'):
                claim = o['protection']
                if info.get('offload') != claim[len('offload-'):]:
                    wrong.append(f"{claim} on a SecY with offload {info.get('offload')}")
                if not info.get('protect') or not info.get('encrypt'):
                    wrong.append(f'{claim} on a SecY that does not protect and encrypt')
                if 'UP' not in link.get('flags', []):
                    wrong.append(f'{claim} on a SecY that is down')
            verdicts.append(wrong)
        if not verdicts:
            errors.append(f"no MACsec link with secy-ifindex {o['secy-ifindex']}"
                          f" (secy-netnsid {o.get('secy-netnsid')})")
        elif all(verdicts):
            errors += verdicts[0]
    rdma = sorted({r.get('ifname') for r in oracle.get('rdma') or []
                   if r.get('netdev') == o.get('ifname')
                   and r.get('netdev_index') == o.get('ifindex')})
    if sorted(o.get('rdma-dev', [])) != rdma:
        errors.append(f"rdma-dev {o.get('rdma-dev', [])}, rdma link {rdma}")
    return errors


def main():
    d = sys.argv[1]
    ntf = load(os.path.join(d, 'ntf'), None)
    if ntf is None:
        print('# the monitor printed no notification list:')
        with open(os.path.join(d, 'ntf.err')) as f:
            for line in f.read().splitlines()[-5:]:
                print(f'#   {line}')
        ntf = []
    notes = [n['msg'] for n in ntf if n.get('name') == 'dev-change-ntf']

    # What the previous row left, per port name: ifindex, generation; at
    # first, what the table started from (dump.0).
    prev = {p['ifname']: p for p in load(os.path.join(d, 'dump.0'), [])}
    bad = [(m.get('ifname'), m.get('generation'), e) for m in notes for e in shape(m)]
    with open(os.path.join(d, 'rows')) as f:
        rows = [line.rstrip('\n').split('\t') for line in f if line.strip()]
    for r in rows:
        n, desc, port, bit, ethtool, prot, reason, relation, owner, rc = r[:10]
        seq = r[10] if len(r) > 10 else '-'
        validate = r[11] if len(r) > 11 else '-'
        errors = []
        if rc != '0':
            with open(os.path.join(d, f'action.{n}')) as f:
                out = f.read().strip().replace('\n', ' | ')
            errors.append(f'action failed ({rc}): {out}')
        if bit != '-' and ethtool != bit:
            errors.append(f'ethtool -k: macsec-hw-offload {ethtool or "?"}, want {bit}')

        dump = load(os.path.join(d, f'dump.{n}'), None)
        if not isinstance(dump, list):
            errors.append('dump failed')
            dump = []
        found = [p for p in dump if p.get('ifname') == port]
        obj = found[0] if found else None
        before = prev.get(port)
        if prot == 'absent':
            if obj:
                errors.append(f'dump still shows {port}')
        elif not obj:
            errors.append(f'dump has no {port}')
        else:
            want = {'protection': prot, 'reason': 'none' if reason == '-' else reason}
            if relation == 'none':
                want['relation'] = None
            elif relation != '-':
                want['relation'] = relation
            if owner != '-':
                want['feature-owner'] = owner
            if validate != '-':
                want['validate'] = None if validate == 'none' else validate
            for key, value in want.items():
                if obj.get(key) != value:
                    errors.append(f'dump: {key} {obj.get(key)}, want {value}')
            errors += [f'dump: {e}' for e in shape(obj)]
            oracle = load(os.path.join(d, f'oracle.{n}'), None)
            if not isinstance(oracle, dict):
                errors.append('no record of the MACsec and RDMA links')
            else:
                errors += [f'dump: {e}' for e in against_oracle(oracle, obj)]

        ifindex = obj['ifindex'] if obj else (before or {}).get('ifindex')
        lo = before['generation'] if before else 0
        hi = obj['generation'] if obj else None
        mine = [m for m in notes if m.get('ifindex') == ifindex
                and m['generation'] > lo and (hi is None or m['generation'] <= hi)]
        if hi is None:
            # Gone: up to its farewell (a later port may reuse the ifindex).
            ends = [i for i, m in enumerate(mine) if m.get('reason') == 'unknown']
            mine = mine[:ends[0] + 1] if ends else mine
        gens = [m['generation'] for m in mine]
        if gens != sorted(set(gens)):
            errors.append(f'notification generations not strictly increasing: {gens}')
        if obj:
            if before and hi == lo:
                # Nothing changed: no notification can fall in (lo, hi];
                # a repeat of generation lo is caught below. Nor can any
                # field have changed.
                for key in sorted(set(obj) | set(before)):
                    if obj.get(key) != before.get(key):
                        errors.append(f'{key} {before.get(key)} -> {obj.get(key)}, generation unchanged')
            elif hi <= lo:
                errors.append(f'generation went from {lo} to {hi}')
            elif not mine:
                errors.append(f'generation {lo} -> {hi}, but no notification')
            else:
                last = mine[-1]
                # Every field; secy-netnsid is relative to the reader (the
                # port's namespace for a notification, the dumper's here).
                for key in sorted((set(last) | set(obj)) - {'secy-netnsid'}):
                    if last.get(key) != obj.get(key):
                        errors.append(f'last notification: {key} {last.get(key)}, dump {obj.get(key)}')
        elif before:
            if not mine or mine[-1].get('protection') != 'none':
                errors.append(f'{port} went away without a retracting notification')

        if seq.startswith('='):
            want = [s for s in seq[1:].split(',') if s]
            got = [f"{m.get('protection')}/{m.get('reason')}" for m in mine]
            if got != want:
                errors.append(f'notifications {got}, want {want}')

        if obj:
            prev[port] = obj
        else:
            prev.pop(port, None)
        if errors:
            for e in errors:
                print(f'# {port}: {e}')
            print(f'# dump: {json.dumps(obj)}')
            print(f'# notifications: {json.dumps(mine)}')
        print(f'{"FAIL" if errors else "PASS"}\t{desc}')

    # Every notification carries what an object carries.
    for ifname, gen, e in bad:
        print(f'# notification {gen} ({ifname}): {e}')
    print(f'{"FAIL" if bad else "PASS"}\tevery notification carries every field its verdict needs'
          f' ({len(notes)})')

    # Exactly one notification per generation handed out.
    gens = sorted(m['generation'] for m in notes)
    dups = sorted({g for g in gens if gens.count(g) > 1})
    gaps = [(a, b) for a, b in zip(gens, gens[1:]) if b - a > 1]
    if dups or gaps or not gens:
        print(f'# {len(gens)} notifications; repeated generations {dups}, gaps {gaps}')
        print('FAIL\tone notification per change, none lost, none repeated')
    else:
        print(f'PASS\tone notification per change, none lost, none repeated ({len(gens)})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
