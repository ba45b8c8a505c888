"""Every Objective-C message must be sent inside an @autoreleasepool of its own function.

Python threads have no run loop, so nothing drains an autorelease pool there: an object
autoreleased outside an @autoreleasepool block lives until the thread exits. This reads
clang's text AST dump (`clang -Xclang -ast-dump`, stdin) and reports each message send
(ObjCMessageExpr: selectors, property accesses, subscripts) with no ObjCAutoreleasePoolStmt
between it and its function. A block is a function of its own: it runs later on a Metal
thread, outside the pools of the code that made it, so any call in it counts too.
Exit status: 0 clean, 1 with the offending lines printed.
"""

from __future__ import annotations

import re
import sys

FUNCTIONS = {
    "FunctionDecl",
    "CXXMethodDecl",
    "CXXConstructorDecl",
    "CXXDestructorDecl",
    "CXXConversionDecl",
    "ObjCMethodDecl",
    "BlockDecl",
}
CALLS = {"CallExpr", "CXXMemberCallExpr", "CXXOperatorCallExpr"}
NODE = re.compile(r"^[| `-]*?([A-Z]\w*) ")
# Begin of a source range: <file:line:col, <line:N:col or line:N:col (clang elides the file
# and line when they repeat).
LOC = re.compile(r"<(?!line:|col:)([^<>:, ]+):(\d+):\d+|\bline:(\d+):\d+")
NAME = re.compile(r"> (?:line:\d+:\d+|col:\d+|[^ ]+:\d+:\d+)(?: \w+)* (~?\w+) '")


def violations(lines):
    stack: list[tuple[int, str, str]] = []  # (depth, kind, name) of open ancestors
    file, line = "?", 0
    for text in lines:
        m = NODE.match(text)
        if not m:
            continue
        depth, kind = m.start(1), m.group(1)
        for loc in LOC.finditer(text):
            if loc.group(1):
                file, line = loc.group(1), int(loc.group(2))
            else:
                line = int(loc.group(3))
            break
        while stack and stack[-1][0] >= depth:
            stack.pop()
        name = ""
        if kind in FUNCTIONS:
            n = NAME.search(text)
            name = n.group(1) if n else "(block)" if kind == "BlockDecl" else "?"
        stack.append((depth, kind, name))
        in_block = next((k for _, k, _ in reversed(stack) if k in FUNCTIONS), "") == "BlockDecl"
        if kind != "ObjCMessageExpr" and not (in_block and kind in CALLS):
            continue
        for _, k, fn in reversed(stack[:-1]):
            if k == "ObjCAutoreleasePoolStmt":
                break
            if k in FUNCTIONS:
                what = re.search(r"selector=(\S+)", text)
                sent = f"[... {what.group(1)}] in {fn}" if what else "a call in a block"
                yield f"{file}:{line}: {sent} outside an @autoreleasepool"
                break


def main() -> int:
    found = list(dict.fromkeys(violations(sys.stdin)))
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
