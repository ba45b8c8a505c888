"""Progress on stderr: a tqdm bar on a terminal, otherwise one line per case."""

from __future__ import annotations

import sys


class Progress:
    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.bar = None
        if sys.stderr.isatty():  # a redrawn bar only makes sense on a terminal
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, unit="case", file=sys.stderr, leave=False)

    def start(self, what: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(what, refresh=True)
        else:
            width = len(str(self.total))
            print(f"[{self.done + 1:>{width}}/{self.total}] {what}", file=sys.stderr, flush=True)

    def finish_one(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)

    def say(self, text: str) -> None:
        """A message that must not be overdrawn by the bar."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
