#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the kernel's YNL CLI and the tests' Python helpers in one process.

Under TCG, starting Python costs a second or more, and the CLI about ten
(most of it importing the CLI's library). This imports the library once,
then, for each request read from a FIFO, forks a child that runs the
program as `python3 PROGRAM ARGS` would: with its own argv, stdin, stdout
and stderr, its exit status, and nothing left over from other requests (no
cached family ids, no sockets a garbage collection might close under a
forwarded fd). Children run side by side, as separate processes would.

A request is one JSON line:

    {"out": PATH, "token": T, "program": PROGRAM, "argv": [ARGS...],
     "stdin": PATH, "cwd": DIR, "fds": {"9": "/proc/PID/fd/9", ...},
     "netns": PATH}

PROGRAM is a script's path (such as CLI_PY, the CLI whose library the
server imported), "-" for a program read from stdin, or "-c" for the code
in the first of ARGS. "stdin" is a path the child opens as its stdin (such as
the caller's /proc/PID/fd/0; none: /dev/null). Each fd named in "fds" is
opened from its path for the run (null: closed), so that
`--json '{"secy-netns-fd": 9}'` finds what the caller's fd 9 is. With
"netns" (a namespace file, such as /run/netns/NAME) the child enters that
network namespace first, as `ip netns exec NAME python3 ...` would. The
child writes its stdout and stderr to PATH.stdout and PATH.stderr, then
"T STATUS" to PATH.rc, which appears last and whole (a rename). The
program sees the server's environment, not the caller's.

The server ends on "quit", or when process PID (the test's shell) is gone.

    py_server.py CLI_PY FIFO PID
"""

import ctypes
import json
import os
import select
import sys
import traceback

cli, fifo, owner = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Whatever else the test had open (the kselftest runner's log, a virtio
# console port that admits one opener at a time) is not ours to hold.
os.closerange(3, 1024)
# A program's sys.path: its own directory, then this one's defaults.
base_path = sys.path[1:]
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),
                os.path.dirname(os.path.abspath(cli))]
import lib  # noqa: E402,F401  (the CLI's own library: imported once, here)
from mb_genl import CLONE_NEWNET, nscall  # noqa: E402  (beside this file)
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


def onto(fd, path, flags):
    """The file PATH opened onto fd FD."""
    new = os.open(path, flags, 0o644)
    if new != fd:
        os.dup2(new, fd)
        os.close(new)


def program(req):
    """The request's code, its file name and its argv."""
    prog, argv = req['program'], req['argv']
    if prog == '-':
        return sys.stdin.read(), '<stdin>', ['-'] + argv, ''
    if prog == '-c':
        return argv[0], '<string>', ['-c'] + argv[1:], ''
    return open(prog).read(), prog, [prog] + argv, os.path.dirname(os.path.abspath(prog))


def run(req):
    """In the child: the request's namespace, directory, fds and stdio,
    then the program. Returns its exit status."""
    if req.get('netns'):
        enter_netns(req['netns'])
    if req.get('cwd'):
        os.chdir(req['cwd'])
    for n, path in req.get('fds', {}).items():
        n = int(n)
        # Only fds a process can have: a larger number names nothing,
        # there as here.
        if not 2 < n < 1024 or n == requests:
            continue
        if path is None:
            try:
                os.close(n)
            except OSError:
                pass
        else:
            onto(n, path, os.O_RDONLY)
    onto(0, req.get('stdin') or os.devnull, os.O_RDONLY)
    onto(1, req['out'] + '.stdout', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    onto(2, req['out'] + '.stderr', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    rc = 0
    try:
        text, name, sys.argv, path0 = program(req)
        sys.path[:] = [path0] + base_path
        exec(compile(text, name, 'exec'), {'__name__': '__main__', '__file__': name})
    except SystemExit as e:
        if e.code is None:
            rc = 0
        elif isinstance(e.code, int):
            rc = e.code
        else:  # as python3 does: the message, status 1
            print(e.code, file=sys.stderr)
            rc = 1
    except BaseException:  # as python3 does: a traceback (from the
        # program's frames on), status 1
        kind, value, tb = sys.exc_info()
        traceback.print_exception(kind, value, tb.tb_next)
        rc = 1
    return rc


def serve(req):
    if os.fork() != 0:
        return
    rc = 1
    try:
        rc = run(req)
    except BaseException:  # the request's, not the server's: answer it
        traceback.print_exc()
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        try:
            with open(req['out'] + '.rc.tmp', 'w') as f:
                f.write(f"{req['token']} {rc & 0xff}\n")
            os.rename(req['out'] + '.rc.tmp', req['out'] + '.rc')
        finally:
            os._exit(0)


def owner_alive():
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return False
    return True


buf = b''
while owner_alive():
    # Children that ended: reaped, so none is left a zombie.
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
    if not select.select([requests], [], [], 0.5)[0]:
        continue
    buf += os.read(requests, 1 << 20)
    while b'\n' in buf:
        line, buf = buf.split(b'\n', 1)
        if line.strip() == b'quit':
            sys.exit(0)
        if not line.strip():
            continue
        serve(json.loads(line))
