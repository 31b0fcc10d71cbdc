"""The one in-process worker that LLM.collective_rpc reaches: vLLM calls a method on every worker
and returns their results in a list; here the C++ engine is a single worker."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union


class Worker:
    """The worker methods of vLLM's that mean something here."""

    def __init__(self, llm_engine: Any) -> None:
        self.llm_engine = llm_engine
        self.rank = 0
        self.local_rank = 0

    def check_health(self) -> None:
        """Nothing to report: the engine runs in this process."""

    def sleep(self, level: int = 1) -> None:
        self.llm_engine.sleep(level)

    def wake_up(self, tags: Optional[list[str]] = None) -> None:
        self.llm_engine.wake_up(tags)

    def reset_prefix_cache(self) -> bool:
        return self.llm_engine.reset_prefix_cache()


def run_method(worker: Worker, method: Union[str, Callable[..., Any]], args: tuple,
               kwargs: dict[str, Any]) -> Any:
    """vLLM's run_method: a name is looked up on the worker, a callable gets it first."""
    if isinstance(method, str):
        try:
            function = getattr(worker, method)
        except AttributeError:
            raise NotImplementedError(f"Method {method!r} is not implemented.") from None
        return function(*args, **kwargs)
    return method(worker, *args, **kwargs)
