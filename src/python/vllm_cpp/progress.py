"""The progress bar of LLM.generate(use_tqdm=True): tqdm when it is installed, else a one-line
bar of its own on stderr (vLLM's "Processed prompts" with input and output token speeds)."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """Counts finished requests and the tokens they read and wrote."""

    _REDRAW_SECONDS = 0.1

    def __init__(self, total: int, enabled: bool) -> None:
        self._total = total
        self._enabled = enabled
        self._done = 0
        self._input_tokens = 0
        self._output_tokens = 0
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._tqdm = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self._tqdm = tqdm(total=total, desc="Processed prompts", dynamic_ncols=True)

    def update(self, input_tokens: int, output_tokens: int) -> None:
        if not self._enabled:
            return
        self._done += 1
        self._input_tokens += input_tokens
        self._output_tokens += output_tokens
        seconds = max(time.monotonic() - self._start, 1e-9)
        speeds = (f"est. speed input: {self._input_tokens / seconds:.2f} toks/s, "
                  f"output: {self._output_tokens / seconds:.2f} toks/s")
        if self._tqdm is not None:
            self._tqdm.postfix = speeds
            self._tqdm.update(1)
            return
        now = time.monotonic()
        if self._done < self._total and now - self._last_draw < self._REDRAW_SECONDS:
            return
        self._last_draw = now
        width = 30
        filled = width * self._done // max(self._total, 1)
        percent = 100 * self._done // max(self._total, 1)
        bar = "#" * filled + " " * (width - filled)
        sys.stderr.write(f"\rProcessed prompts: {percent:3d}%|{bar}| {self._done}/{self._total} "
                         f"[{seconds:.1f}s, {speeds}]")
        sys.stderr.flush()

    def close(self) -> None:
        if not self._enabled:
            return
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._done > 0:
            sys.stderr.write("\n")
            sys.stderr.flush()
