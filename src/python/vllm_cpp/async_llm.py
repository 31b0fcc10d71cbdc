"""vLLM's AsyncLLM (alias AsyncLLMEngine): an asyncio front end whose engine loop runs on its
own C++ thread. generate() is an async generator of RequestOutputs; the engine thread wakes the
event loop through call_soon_threadsafe whenever a request's stream has something new."""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import AsyncGenerator, Callable, Iterable, Optional, TypeVar, Union

from . import _core
from .engine_args import AsyncEngineArgs
from .inputs import PromptEmbeds, PromptType, parse_prompt
from .lora.request import LoRARequest, core_lora_request
from .outputs import CumulativeOutputs, RequestOutput, request_output_from_core
from .pooling import PoolingParams, PoolingRequestOutput, pooling_outputs_from_core
from .sampling_params import RequestOutputKind, SamplingParams
from .tokenizer import _NO_TOKENIZER, Tokenizer

_T = TypeVar("_T")


class EngineDeadError(Exception):
    """vLLM's error for an engine that no longer runs (vllm.v1.engine.exceptions)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(args or ("EngineCore encountered an issue. See stack trace (above) "
                                    "for the root cause.",)))


class AsyncLLM:
    """Thread-safe asyncio engine: AsyncLLM.from_engine_args(AsyncEngineArgs(model=...))."""

    def __init__(self, engine_args: AsyncEngineArgs) -> None:
        core_args = engine_args._to_core()
        self._seeds = engine_args._request_seeds()
        self._core = _core.AsyncEngine(core_args)
        # None under skip_tokenizer_init: prompts are token ids, outputs have empty text.
        self._tokenizer = Tokenizer(self._core) if self._core.tokenizer is not None else None
        # Stops the engine thread when the object goes away or Python exits, if not before.
        self._finalizer = weakref.finalize(self, self._core.shutdown)
        # From sleep() until the engine is awake again, new requests wait before reaching it, as
        # vLLM's paused scheduler holds them, so a stream of them cannot keep sleep(mode="wait")
        # from ever finding the engine idle. The lock makes closing admission and handing a
        # request to the engine exclusive, whatever threads and event loops they come from.
        self._admission_lock = threading.Lock()
        self._admission_closed = False
        self._admission_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []

    @classmethod
    def from_engine_args(cls, engine_args: AsyncEngineArgs, start_engine_loop: bool = True,
                         usage_context: object = None,
                         stat_loggers: object = None) -> "AsyncLLM":
        """vLLM's constructor; the engine loop always starts."""
        return cls(engine_args)

    @property
    def is_running(self) -> bool:
        return self._core.is_running

    @property
    def is_stopped(self) -> bool:
        return not self._core.is_running

    @property
    def errored(self) -> bool:
        return not self._core.is_running

    @property
    def dead_error(self) -> BaseException:
        return EngineDeadError()

    async def check_health(self) -> None:
        """Raises EngineDeadError once the engine has stopped (after shutdown())."""
        if self.errored:
            raise self.dead_error

    async def get_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            raise ValueError(_NO_TOKENIZER)
        return self._tokenizer

    async def get_default_sampling_params(self) -> SamplingParams:
        return SamplingParams._from_core(self._core.default_sampling_params)

    async def generate(self, prompt: PromptType, sampling_params: SamplingParams,
                       request_id: str, *, lora_request: Optional[LoRARequest] = None,
                       trace_headers: None = None,
                       priority: int = 0,
                       data_parallel_rank: Optional[int] = None
                       ) -> AsyncGenerator[RequestOutput, None]:
        """Yields the request's outputs as its sampling_params.output_kind says, the final one
        with finished=True. Closing or cancelling the generator aborts the request.
        lora_request (enable_lora): the adapter it runs with."""
        core_lora = core_lora_request(lora_request)
        if not isinstance(sampling_params, SamplingParams):
            raise TypeError(f"sampling_params must be a SamplingParams, not "
                            f"{type(sampling_params).__name__}")
        engine_prompt, prompt_text = parse_prompt(prompt, allow_embeds=True)
        embeds = engine_prompt.data if isinstance(engine_prompt, PromptEmbeds) else None
        seed = self._seeds.next()
        # The engine runs a CUMULATIVE request as a DELTA one; its outputs are gathered here.
        cumulative = (CumulativeOutputs()
                      if sampling_params.output_kind == RequestOutputKind.CUMULATIVE else None)
        core_params = sampling_params._to_core(
            seed, None if cumulative is None else RequestOutputKind.DELTA)
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:  # on the engine thread, with the GIL
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        stream = await self._admit(lambda: self._core.submit(
            request_id, [] if embeds is not None else engine_prompt, core_params, priority, wake,
            prompt_embeds=embeds, lora_request=core_lora))
        finished = False
        try:
            while True:
                output = stream.try_next()
                if output is None:
                    if stream.done:
                        if stream.rejected:
                            raise ValueError(stream.error)
                        if stream.error:
                            raise RuntimeError(stream.error)
                        return
                    await ready.wait()
                    ready.clear()
                    continue
                finished = output.finished
                converted = request_output_from_core(output, prompt_text)
                result = converted if cumulative is None else cumulative.add(converted)
                result.lora_request = lora_request
                yield result
                if finished:
                    return
        finally:
            if not finished and self._core.is_running:
                self._core.abort(request_id)

    async def encode(self, prompt: PromptType, pooling_params: PoolingParams, request_id: str,
                     lora_request: Optional[LoRARequest] = None, trace_headers: None = None,
                     priority: int = 0,
                     truncate_prompt_tokens: Optional[int] = None,
                     tokenization_kwargs: Optional[dict] = None
                     ) -> AsyncGenerator[PoolingRequestOutput, None]:
        """Pooling models: yields the request's one PoolingRequestOutput (the pooler's raw output,
        pooling_params.task "encode"; "embed" and "classify" give those tasks' outputs). A
        pooling request finishes in the step that computes its prompt: cancelling the generator
        drops its output. lora_request (enable_lora, decoder models): the adapter it runs."""
        if not isinstance(pooling_params, PoolingParams):
            raise TypeError(f"pooling_params must be a PoolingParams, not "
                            f"{type(pooling_params).__name__}")
        task = pooling_params.task or "encode"
        if task not in ("encode", "embed", "classify"):
            raise NotImplementedError(f"pooling task {task!r} is not supported by vllm-cpp")
        engine_prompt, _ = parse_prompt(prompt)
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def finish(row: object, error: str, rejected: bool) -> None:  # on the engine thread
            def settle() -> None:
                if not done.done():
                    done.set_result((row, error, rejected))
            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        await self._admit(lambda: self._core.submit_pooling(
            request_id, engine_prompt, task, pooling_params._to_core(truncate_prompt_tokens),
            finish, core_lora_request(lora_request)))
        row, error, rejected = await done
        if row is None:
            raise (ValueError if rejected else RuntimeError)(error)
        yield pooling_outputs_from_core(task, [row])[0]

    async def add_lora(self, lora_request: LoRARequest) -> bool:
        """Loads the adapter now (enable_lora); ValueError with the loader's message."""
        return self._core.add_lora(core_lora_request(lora_request))

    async def remove_lora(self, lora_id: int) -> bool:
        return self._core.remove_lora(lora_id)

    async def list_loras(self) -> set[int]:
        return set(self._core.list_loras())

    async def abort(self, request_id: Union[str, Iterable[str]]) -> None:
        """Aborts requests; each one's stream ends with finish_reason "abort"."""
        for each in [request_id] if isinstance(request_id, str) else request_id:
            self._core.abort(each)

    async def sleep(self, level: int = 1, mode: str = "abort") -> None:
        """vLLM's sleep mode: level 1 frees the KV cache (the prefix cache is forgotten), level 2
        also the weights' memory (a GGUF file's pages, read back when used). mode says what
        happens to the requests under way, as in vLLM: "abort" (the default) ends them with
        finish_reason "abort", "wait" lets them finish first. Requests that come from the call
        on wait in generate() / encode() until wake_up() and then run, as vLLM queues them."""
        if mode not in ("abort", "wait", "keep"):
            raise ValueError(f"Invalid pause mode: {mode}")
        if mode == "keep":
            raise NotImplementedError(
                "sleep(mode='keep') is not supported by vllm-cpp: its requests would lose their KV "
                "cache; use mode='abort' or mode='wait'")
        with self._admission_lock:
            self._admission_closed = True
        try:
            # Admission is closed, so the unfinished requests only ever get fewer.
            while mode == "wait" and await asyncio.to_thread(
                    lambda: self._core.num_unfinished_requests) > 0:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(self._core.sleep, level, mode == "abort")
        except BaseException:
            # Refused (a bad level) or cancelled: an engine still awake takes requests again.
            if self._core.is_running and not self._core.is_sleeping:
                self._open_admission()
            raise

    async def wake_up(self, tags: Optional[list[str]] = None) -> None:
        """Restores what sleep() freed ("weights", "kv_cache"; None: both). Once the engine is
        awake (its KV cache back), the requests that waited run."""
        await asyncio.to_thread(self._core.wake_up, list(tags or []))
        if not await self.is_sleeping():
            self._open_admission()

    async def is_sleeping(self) -> bool:
        return await asyncio.to_thread(lambda: self._core.is_sleeping)

    async def _admit(self, submit: Callable[[], _T]) -> _T:
        """Hands a request to the engine (submit()), first waiting for wake_up() while sleep()
        holds admission closed."""
        while True:
            with self._admission_lock:
                if not self._admission_closed:
                    return submit()
                loop = asyncio.get_running_loop()
                waiter = loop.create_future()
                self._admission_waiters.append((loop, waiter))
            await waiter  # closed again before this request ran: it waits once more

    def _open_admission(self) -> None:
        with self._admission_lock:
            self._admission_closed = False
            waiters, self._admission_waiters = self._admission_waiters, []
        for loop, waiter in waiters:
            try:
                loop.call_soon_threadsafe(_release, waiter)
            except RuntimeError:  # its loop is closed: nobody is waiting any more
                pass

    def shutdown(self) -> None:
        """Stops the engine thread; unfinished generators end with RuntimeError, those waiting
        for wake_up() too."""
        self._finalizer()
        self._open_admission()


def _release(waiter: asyncio.Future) -> None:
    if not waiter.done():  # a cancelled request is done already
        waiter.set_result(None)


# vLLM's older name for the same engine.
AsyncLLMEngine = AsyncLLM
