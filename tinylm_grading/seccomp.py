"""The system calls the grading sandbox refuses: a classic BPF program for bubblewrap's ``--seccomp``.

Two kinds of call reach past what bubblewrap's namespaces hold (a red-teamer tried both from a capstone command):

- **the kernel's keyrings** (``add_key``, ``request_key``, ``keyctl``): they belong to a uid, not to a namespace, and
  outlive the sandbox. Every sandbox of a root grader has a uid of its own, so each could leave 200 keys (20 kB of the
  kernel's memory) behind for good;
- **new user namespaces** (``unshare`` or ``clone`` with ``CLONE_NEWUSER``; ``clone3``, whose flags a filter cannot
  read, answers ``ENOSYS`` and the C library falls back to ``clone``): inside one, learner code gets every
  capability over what it creates, which is where many of Linux's privilege escalations start. Nothing the course
  runs needs one.

They fail with ``EPERM``; everything else is allowed. The program knows the numbers of these calls on x86-64 (and its
32-bit and x32 entries) and on arm64 (and its 32-bit one); on another architecture it allows everything (and
:func:`program` says so by returning None).
"""
from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
NR, ARCH, ARG0 = 0, 4, 16  # (the low half of args[0]: little-endian on both architectures)
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, ...|JGE|K, ...|JSET|K, BPF_RET|K
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
CLONE_NEWUSER = 0x10000000
X32_BIT = 0x40000000

# arch -> (AUDIT_ARCH_*, {call: number})
CALLS = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "clone": 56,
                            "clone3": 435}),
    "i386": (0x40000003, {"add_key": 286, "request_key": 287, "keyctl": 288, "unshare": 310, "clone": 120,
                          "clone3": 435}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "clone": 220,
                             "clone3": 435}),
    "arm": (0x40000028, {"add_key": 309, "request_key": 310, "keyctl": 311, "unshare": 337, "clone": 120,
                         "clone3": 435}),
}
HOSTS = {"x86_64": ("x86_64", "i386"), "aarch64": ("aarch64", "arm")}  # a machine's own ABI and its 32-bit one
REFUSED = ("add_key", "request_key", "keyctl")


def _assemble(code: list) -> bytes:
    """``code``: instructions ``(op, k, then, otherwise)``, where ``then``/``otherwise`` name a label (or None: the
    next instruction), and labels (strings) between them. Returns the program as ``struct sock_filter`` records."""
    at, n = {}, 0
    for item in code:
        if isinstance(item, str):
            at[item] = n
        else:
            n += 1
    out, n = [], 0
    for item in code:
        if isinstance(item, str):
            continue
        op, k, then, otherwise = item
        jt = at[then] - n - 1 if then else 0
        jf = at[otherwise] - n - 1 if otherwise else 0
        assert 0 <= jt < 256 and 0 <= jf < 256
        out.append(struct.pack("=HBBI", op, jt, jf, k))
        n += 1
    return b"".join(out)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (``platform.machine()`` by default), or None where its calls' numbers are not known."""
    abis = HOSTS.get(machine or platform.machine())
    if abis is None:
        return None
    code: list = [(LD, ARCH, None, None)]
    code += [(JEQ, CALLS[abi][0], abi, None) for abi in abis]
    code += [(RET, ALLOW, None, None)]  # a caller of another architecture's calls: none of these can be it
    for abi in abis:
        numbers = CALLS[abi][1]
        code += [abi, (LD, NR, None, None)]
        if abi == "x86_64":
            code += [(JGE, X32_BIT, "refuse", None)]  # the x32 entries: nothing here uses them
        code += [(JEQ, numbers[name], "refuse", None) for name in REFUSED]
        code += [(JEQ, numbers["clone3"], "nosys", None)]
        code += [(JEQ, numbers[name], "flags", None) for name in ("unshare", "clone")]
        code += [(RET, ALLOW, None, None)]
    code += ["flags", (LD, ARG0, None, None), (JSET, CLONE_NEWUSER, "refuse", None), (RET, ALLOW, None, None)]
    code += ["refuse", (RET, ERRNO | errno.EPERM, None, None), "nosys", (RET, ERRNO | errno.ENOSYS, None, None)]
    return _assemble(code)
