#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kernel's YNL CLI unchanged, letting SIGUSR1 end its --sleep.

`cli.py --subscribe monitor --sleep N` collects notifications for N seconds
and prints them. A lockstep table wants one monitor across all its rows,
however long they take: this runs cli.py itself (same arguments, same code
path) and turns SIGUSR1 into an early end of that wait, after which every
notification already sent is still read and printed.

The CLI polls the socket (YnlFamily.poll_ntf, replaced here) and prints
one JSON object per notification; this prints them as one JSON list.

    ynl_monitor.py CLI_PY [cli.py arguments...]
"""

import io
import json
import os
import runpy
import selectors
import signal
import sys
import time


woken = False


def wake(_signum, _frame):
    global woken
    woken = True


def poll_ntf(self, duration=None):
    """YnlFamily.poll_ntf until SIGUSR1 (or `duration`), then drains the
    socket: what the kernel sent before the signal is all yielded."""
    start = time.time()
    sel = selectors.DefaultSelector()
    sel.register(self.sock, selectors.EVENT_READ)
    while True:
        while not self.async_msg_queue.empty():
            yield self.async_msg_queue.get_nowait()
        done = woken or (duration is not None and time.time() - start >= duration)
        if sel.select(0 if done else 0.1):
            self.check_ntf()
        elif done:
            return


signal.signal(signal.SIGUSR1, wake)
cli = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(cli)))
import lib  # noqa: E402  (the CLI's own library, found next to it)
lib.YnlFamily.poll_ntf = poll_ntf

out = io.StringIO()
real_stdout, sys.stdout = sys.stdout, out
try:
    runpy.run_path(cli, run_name='__main__')
finally:
    sys.stdout = real_stdout
    text = out.getvalue()
    try:
        ntf = json.loads(text) if text.strip() else []
    except ValueError:
        ntf = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not isinstance(ntf, list):
        # One notification, printed on its own.
        ntf = [ntf]
    print(json.dumps(ntf))
