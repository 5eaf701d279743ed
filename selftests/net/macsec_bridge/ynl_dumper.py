#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`cli.py --dump dev-get --output-json`, once per request, in one process.

A lockstep table dumps the family after every row. Under TCG, starting
the CLI (Python, its library, the spec) costs seconds each time; this
loads the CLI's own library and the spec once and answers requests read
from a FIFO: each line names a file, which gets what the CLI would have
printed (the dump as one JSON list, or the error), written to a temporary
name and renamed, so that the file appears complete.

    ynl_dumper.py CLI_PY SPEC FIFO
"""

import json
import os
import sys

cli, spec, fifo = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(cli)))
from lib import YnlFamily  # noqa: E402  (the CLI's own library)


class Encoder(json.JSONEncoder):
    """As the CLI's: bytes as hex, sets as lists."""
    def default(self, o):
        if isinstance(o, bytes):
            return o.hex()
        if isinstance(o, set):
            return list(o)
        return json.JSONEncoder.default(self, o)


ynl = YnlFamily(spec, schema='')  # as --no-schema
# Read and write: the FIFO never sees end-of-file between two requests.
with os.fdopen(os.open(fifo, os.O_RDWR), 'r') as requests:
    for line in requests:
        path = line.strip()
        if not path:
            continue
        if path == 'quit':
            break
        try:
            text = json.dumps(ynl.dump('dev-get', {}), cls=Encoder)
        except Exception as e:  # what the CLI would have printed
            text = f'{type(e).__name__}: {e}'
        with open(path + '.tmp', 'w') as out:
            out.write(text + '\n')
        os.rename(path + '.tmp', path)
