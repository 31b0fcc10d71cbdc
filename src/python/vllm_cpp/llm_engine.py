"""vLLM's LLMEngine: add_request / step / abort_request over the C++ engine (LLM's engine,
`llm.llm_engine`). Each step runs with the GIL released."""

from __future__ import annotations

from typing import Iterable, Optional, Union

from . import _core
from .engine_args import EngineArgs
from .inputs import PromptEmbeds, PromptType, parse_prompt
from .lora.request import LoRARequest, core_lora_request
from .metrics import Metric, RequestTally, collect_metrics
from .outputs import CumulativeOutputs, RequestOutput, request_output_from_core
from .sampling_params import RequestOutputKind, SamplingParams
from .tokenizer import _NO_TOKENIZER, Tokenizer


class LLMEngine:
    """Text in, RequestOutputs out, one engine step at a time."""

    def __init__(self, engine_args: EngineArgs) -> None:
        core_args = engine_args._to_core()
        self._seeds = engine_args._request_seeds()
        self._core = _core.Engine(core_args)
        # None under skip_tokenizer_init: prompts are token ids, outputs have empty text.
        self._tokenizer = Tokenizer(self._core) if self._core.tokenizer is not None else None
        self._prompts: dict[str, Optional[str]] = {}  # unfinished request id -> prompt text
        # Unfinished requests run with a LoRA adapter -> it, for their outputs' lora_request.
        self._lora_requests: dict[str, LoRARequest] = {}
        # Unfinished CUMULATIVE requests, which the engine runs as DELTA ones.
        self._cumulative: dict[str, CumulativeOutputs] = {}
        self._model_name = engine_args.model
        self._tally = RequestTally()  # for get_metrics
        self._num_generated: dict[str, int] = {}  # unfinished request id -> tokens so far

    @classmethod
    def from_engine_args(cls, engine_args: EngineArgs, usage_context: object = None,
                         stat_loggers: object = None,
                         enable_multiprocessing: bool = False) -> "LLMEngine":
        """vLLM's constructor; its other arguments change nothing in one process."""
        return cls(engine_args)

    def get_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            raise ValueError(_NO_TOKENIZER)
        return self._tokenizer

    def get_default_sampling_params(self) -> SamplingParams:
        return SamplingParams._from_core(self._core.default_sampling_params)

    @property
    def max_model_len(self) -> int:
        return self._core.max_model_len

    def add_request(self, request_id: str, prompt: PromptType, params: SamplingParams,
                    arrival_time: Optional[float] = None,
                    lora_request: Optional[LoRARequest] = None,
                    tokenization_kwargs: Optional[dict] = None, trace_headers: None = None,
                    priority: int = 0) -> None:
        """Queues a request. ValueError (vLLM's message) when the engine refuses it."""
        self._add(request_id, prompt, params, None, priority, lora_request)

    def _add(self, request_id: str, prompt: PromptType, params: SamplingParams,
             output_kind: Optional[RequestOutputKind], priority: int = 0,
             lora_request: Optional[LoRARequest] = None) -> None:
        if not isinstance(request_id, str):
            raise TypeError(f"request_id must be a str, not {type(request_id).__name__}")
        if not isinstance(params, SamplingParams):
            raise TypeError(f"params must be a SamplingParams, not {type(params).__name__}")
        core_lora = core_lora_request(lora_request)
        engine_prompt, prompt_text = parse_prompt(prompt, allow_embeds=True)
        seed = self._seeds.next()
        cumulative = (output_kind or params.output_kind) == RequestOutputKind.CUMULATIVE
        core_kind = RequestOutputKind.DELTA if cumulative else output_kind
        core_params = params._to_core(seed, core_kind)
        if isinstance(engine_prompt, PromptEmbeds):
            self._core.add_request(request_id, [], core_params, priority,
                                   prompt_embeds=engine_prompt.data, lora_request=core_lora)
        else:
            self._core.add_request(request_id, engine_prompt, core_params, priority,
                                   lora_request=core_lora)
        self._prompts[request_id] = prompt_text
        if lora_request is not None:
            self._lora_requests[request_id] = lora_request
        if cumulative:
            self._cumulative[request_id] = CumulativeOutputs()

    def step(self) -> list[RequestOutput]:
        """Runs one engine step; the outputs of the requests it advanced."""
        return [self._output(output) for output in self._core.step()]

    def abort_request(self, request_ids: Union[str, Iterable[str]]) -> list[RequestOutput]:
        """Finishes the requests with finish_reason "abort"; returns their final outputs."""
        ids = [request_ids] if isinstance(request_ids, str) else list(request_ids)
        return [self._output(output) for output in self._core.abort(ids)]

    def add_lora(self, lora_request: LoRARequest) -> bool:
        """Loads the adapter into the engine's cache now (enable_lora); ValueError with the
        loader's message when it does not load."""
        return self._core.add_lora(core_lora_request(lora_request))

    def remove_lora(self, lora_id: int) -> bool:
        return self._core.remove_lora(lora_id)

    def list_loras(self) -> set[int]:
        return set(self._core.list_loras())

    def has_unfinished_requests(self) -> bool:
        return self._core.has_unfinished_requests()

    def get_num_unfinished_requests(self) -> int:
        return len(self._prompts)

    def get_metrics(self) -> list[Metric]:
        """vLLM's metric objects, as LLM.get_metrics returns them."""
        return collect_metrics(self._model_name, self.max_model_len, self._core.stats(),
                               self._tally)

    def sleep(self, level: int = 1) -> None:
        self._core.sleep(level)

    def wake_up(self, tags: Optional[list[str]] = None) -> None:
        self._core.wake_up(list(tags or []))

    def is_sleeping(self) -> bool:
        return self._core.is_sleeping

    def reset_prefix_cache(self, device: object = None) -> bool:
        return self._core.reset_prefix_cache()

    def _output(self, output: _core.RequestOutput) -> RequestOutput:
        prompt = self._prompts.get(output.request_id)
        cumulative = self._cumulative.get(output.request_id)
        # The engine sends new tokens only (a FINAL_ONLY request: all of them, once).
        num_new = sum(len(part.token_ids) for part in output.outputs)
        self._tally.add_generated(num_new)
        num_generated = self._num_generated.pop(output.request_id, 0) + num_new
        if output.finished:
            self._tally.finish(len(output.prompt_token_ids), num_generated,
                               [part.finish_reason for part in output.outputs])
        else:
            self._num_generated[output.request_id] = num_generated
        lora_request = self._lora_requests.get(output.request_id)
        if output.finished:
            self._prompts.pop(output.request_id, None)
            self._cumulative.pop(output.request_id, None)
            self._lora_requests.pop(output.request_id, None)
        converted = request_output_from_core(output, prompt)
        result = converted if cumulative is None else cumulative.add(converted)
        result.lora_request = lora_request
        return result
