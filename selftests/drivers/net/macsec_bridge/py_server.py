#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kernel's YNL CLI many times in one Python process.

Under TCG, starting the CLI costs about ten seconds, most of it Python
importing the CLI's library. This imports it once, then, for each request
read from a FIFO, forks and runs cli.py itself in the child (the same
code, as `python3 cli.py ARGS` would, with nothing left over from earlier
requests: no cached family ids, no sockets a garbage collection might
close under a forwarded fd), with its stdout, stderr and exit status
written to files.

A request is one JSON line: {"out": PATH, "argv": [ARGS...], "fds":
{"9": "/proc/PID/fd/9", ...}, "netns": PATH}. Each fd named is opened from
its path for the run (null: closed), so that `--json '{"secy-netns-fd": 9}'`
finds what the caller's fd 9 is. With "netns" (a namespace file, such as
/run/netns/NAME) the child enters that network namespace first, as
`ip netns exec NAME cli.py` would for the CLI's sockets. The results are
PATH.stdout, PATH.stderr, then PATH.rc, which appears last. The server ends on "quit", or when process
PID (the test's shell) is gone.

    ynl_server.py CLI_PY FIFO PID
"""

import contextlib
import ctypes
import io
import json
import os
import select
import sys
import traceback

cli, fifo, owner = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Whatever else the test had open (the kselftest runner's log, a virtio
# console port that admits one opener at a time) is not ours to hold.
os.closerange(3, 1024)
sys.path.insert(0, os.path.dirname(os.path.abspath(cli)))
import lib  # noqa: E402,F401  (the CLI's own library: imported once, here)
from mb_genl import CLONE_NEWNET, nscall  # noqa: E402  (beside this file)

code = compile(open(cli).read(), cli, 'exec')
# Out of the way of the fds requests name.
_fd = os.open(fifo, os.O_RDWR)
requests = os.dup2(_fd, 250)
os.close(_fd)


def enter_netns(path):
    """This (single-threaded, forked) process into the network namespace
    of the file PATH."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        nscall(libc.setns, fd, CLONE_NEWNET)
    finally:
        os.close(fd)


def run(req):
    """In the child: the request's namespace and fds, then the CLI."""
    if req.get('netns'):
        enter_netns(req['netns'])
    for n, path in req.get('fds', {}).items():
        n = int(n)
        # Only fds a process can have: a larger number names nothing,
        # there as here.
        if not 2 < n < 1024 or n == requests:
            continue
        if path is None:
            with contextlib.suppress(OSError):
                os.close(n)
        else:
            fd = os.open(path, os.O_RDONLY)
            if fd != n:
                os.dup2(fd, n)
                os.close(fd)
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    sys.argv = [cli] + req['argv']
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(code, {'__name__': '__main__', '__file__': cli})
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
        except Exception:  # as python3 would: a traceback, status 1
            traceback.print_exc()
            rc = 1
    return out.getvalue(), err.getvalue(), rc


def answer(req, stdout, stderr, rc):
    path = req['out']
    for name, text in (('stdout', stdout), ('stderr', stderr)):
        with open(f'{path}.{name}', 'w') as f:
            f.write(text)
    with open(f'{path}.rc.tmp', 'w') as f:
        f.write(f'{rc}\n')
    os.rename(f'{path}.rc.tmp', f'{path}.rc')


def serve(req):
    pid = os.fork()
    if pid == 0:
        try:
            answer(req, *run(req))
        except Exception:  # the request's, not the server's: answer it
            answer(req, '', traceback.format_exc(), 1)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def owner_alive():
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return False
    return True


buf = b''
while owner_alive():
    if not select.select([requests], [], [], 1)[0]:
        continue
    buf += os.read(requests, 65536)
    while b'\n' in buf:
        line, buf = buf.split(b'\n', 1)
        if line.strip() == b'quit':
            sys.exit(0)
        if not line.strip():
            continue
        serve(json.loads(line))
