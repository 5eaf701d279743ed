#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kernel's YNL CLI unchanged, letting SIGUSR1 end its --sleep.

`cli.py --subscribe monitor --sleep N` collects notifications for N seconds
and prints them all. A lockstep table wants one monitor across all its rows,
however long they take: this runs cli.py itself (same arguments, same code
path) and turns SIGUSR1 into an early end of that sleep.

    ynl_monitor.py CLI_PY [cli.py arguments...]
"""

import os
import runpy
import signal
import sys
import time


class Wake(Exception):
    pass


def wake(_signum, _frame):
    raise Wake()


_sleep = time.sleep


def sleep(secs):
    try:
        _sleep(secs)
    except Wake:
        pass


signal.signal(signal.SIGUSR1, wake)
time.sleep = sleep
cli = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(cli)))
runpy.run_path(cli, run_name='__main__')
