"""vLLM's offline entry point: LLM(model).generate(prompts, sampling_params) runs a whole batch
with continuous batching and returns one RequestOutput per prompt, in order; chat() renders
conversations with the chat template first.

The batch loop steps the engine from Python: each step releases the GIL, and Ctrl-C between
steps (KeyboardInterrupt) aborts every request of the batch before it propagates."""

from __future__ import annotations

import itertools
from typing import Any, Callable, Optional, Sequence, Union

from .beam_search import BeamSearchOutput, BeamSearchParams, beam_search_output_from_core
from .engine_args import EngineArgs
from .inputs import PromptType, TokensPrompt, is_single_prompt, parse_prompt
from .llm_engine import LLMEngine
from .lora.request import (LoRARequest, beam_search_lora_requests, core_lora_requests,
                           lora_requests_per_prompt)
from .metrics import Metric
from .outputs import RequestOutput
from .pooling import (ClassificationRequestOutput, EmbeddingRequestOutput, PoolingParams,
                      PoolingRequestOutput, ScoringRequestOutput, pooling_outputs_from_core,
                      scoring_outputs_from_core)
from .progress import ProgressBar
from .sampling_params import RequestOutputKind, SamplingParams
from .tokenizer import Conversation, Tokenizer
from .worker import Worker, run_method


class LLM:
    """An LLM with its engine: LLM(model, **engine_args) takes vLLM's EngineArgs names
    (an unknown name raises TypeError; one vllm-cpp does not implement, NotImplementedError)."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.llm_engine = LLMEngine(EngineArgs(model=model, **kwargs))
        self._request_counter = itertools.count()
        self._worker = Worker(self.llm_engine)

    def sleep(self, level: int = 1) -> None:
        """vLLM's sleep mode, with no request under way: level 1 frees the KV cache, level 2 also
        the weights' memory (a GGUF file's pages, read back when used). Requests are refused
        until wake_up()."""
        self.reset_prefix_cache()
        self.llm_engine.sleep(level)

    def wake_up(self, tags: Optional[list[str]] = None) -> None:
        """Restores what sleep() freed ("weights", "kv_cache"; None: both)."""
        self.llm_engine.wake_up(tags)

    def reset_prefix_cache(self, device: object = None) -> bool:
        """Forgets the cached prefixes; False (nothing done) while a request holds blocks."""
        return self.llm_engine.reset_prefix_cache(device)

    def get_metrics(self) -> list[Metric]:
        """vLLM's list of Counter / Gauge / Histogram / Vector objects (vllm:* names)."""
        return self.llm_engine.get_metrics()

    def collective_rpc(self, method: Union[str, Callable[..., Any]],
                       timeout: Optional[float] = None, args: tuple = (),
                       kwargs: Optional[dict[str, Any]] = None) -> list[Any]:
        """Runs `method` (a worker method's name, or a callable given the worker first) on every
        worker: here the one in-process worker, so a list of one result."""
        return [run_method(self._worker, method, tuple(args), kwargs or {})]

    def get_tokenizer(self) -> Tokenizer:
        return self.llm_engine.get_tokenizer()

    def get_default_sampling_params(self) -> SamplingParams:
        return self.llm_engine.get_default_sampling_params()

    def generate(self, prompts: Union[PromptType, Sequence[PromptType]],
                 sampling_params: Union[SamplingParams, Sequence[SamplingParams], None] = None,
                 use_tqdm: bool = True,
                 lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None,
                 priority: Optional[list[int]] = None) -> list[RequestOutput]:
        """Completes every prompt; one RequestOutput per prompt, in the prompts' order.
        lora_request (enable_lora): one adapter for every prompt, or a list of one per prompt
        (None: the base model); prompts of different adapters run in the same steps."""
        prompt_list = [prompts] if is_single_prompt(prompts) else list(prompts)
        params_list = self._params_per_prompt(sampling_params, len(prompt_list))
        if priority is not None and len(priority) != len(prompt_list):
            raise ValueError("The lengths of prompts and priority must be the same.")
        lora_list = lora_requests_per_prompt(lora_request, len(prompt_list))
        return self._run(prompt_list, params_list, priority or [0] * len(prompt_list), use_tqdm,
                         lora_list)

    def beam_search(self, prompts: list[PromptType], params: BeamSearchParams,
                    lora_request: Union[LoRARequest, list[LoRARequest], None] = None,
                    use_tqdm: bool = False,
                    concurrency_limit: Optional[int] = None) -> list[BeamSearchOutput]:
        """vLLM's beam search: per prompt, its best params.beam_width sequences, best first
        (each sequence's tokens and text include the prompt's). lora_request (enable_lora): one
        adapter for every prompt, or a list of one per prompt; every beam runs with its prompt's."""
        if not isinstance(params, BeamSearchParams):
            raise TypeError(f"params must be a BeamSearchParams, not {type(params).__name__}")
        core_params = params._to_core()
        engine_prompts = [parse_prompt(prompt)[0] for prompt in prompts]
        outputs = self.llm_engine._core.beam_search(
            engine_prompts, core_params, beam_search_lora_requests(lora_request, len(prompts)))
        return [beam_search_output_from_core(output) for output in outputs]

    def embed(self, prompts: Union[PromptType, Sequence[PromptType]], *,
              truncate_prompt_tokens: Optional[int] = None, use_tqdm: bool = True,
              pooling_params: Optional[PoolingParams] = None,
              lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None
              ) -> list[EmbeddingRequestOutput]:
        """Pooling models (runner="pooling"): one embedding per prompt, in order. lora_request
        (enable_lora, decoder models): one adapter for every prompt, or one per prompt."""
        return self._pool("embed", prompts, pooling_params, truncate_prompt_tokens, lora_request)

    def classify(self, prompts: Union[PromptType, Sequence[PromptType]], *, use_tqdm: bool = True,
                 pooling_params: Optional[PoolingParams] = None,
                 lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None
                 ) -> list[ClassificationRequestOutput]:
        """Sequence-classification models: each prompt's class probabilities."""
        return self._pool("classify", prompts, pooling_params, None, lora_request)

    def encode(self, prompts: Union[PromptType, Sequence[PromptType]],
               pooling_params: Optional[PoolingParams] = None, *,
               truncate_prompt_tokens: Optional[int] = None, use_tqdm: bool = True,
               lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None,
               pooling_task: Optional[str] = None) -> list[PoolingRequestOutput]:
        """The pooler's raw output per prompt (pooling_task "encode"; "embed" and "classify"
        give those tasks' outputs)."""
        task = pooling_task or "encode"
        if task not in ("encode", "embed", "classify"):
            raise NotImplementedError(f"pooling_task={task!r} is not supported by vllm-cpp")
        return self._pool(task, prompts, pooling_params, truncate_prompt_tokens, lora_request)

    def score(self, data_1: Union[str, Sequence[str]], data_2: Union[str, Sequence[str]], /, *,
              truncate_prompt_tokens: Optional[int] = None, use_tqdm: bool = True,
              pooling_params: Optional[PoolingParams] = None,
              lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None
              ) -> list[ScoringRequestOutput]:
        """data_1 (one text, or one per data_2 text) against each of data_2: a cross-encoder
        reads each pair as one sequence, an embedding model scores cosine similarity.
        lora_request: one adapter for every pair, or one per pair (both texts of a pair run
        with it)."""
        text_1 = [data_1] if isinstance(data_1, str) else list(data_1)
        text_2 = [data_2] if isinstance(data_2, str) else list(data_2)
        params = (pooling_params or PoolingParams())._to_core(truncate_prompt_tokens)
        loras = core_lora_requests(lora_requests_per_prompt(lora_request, len(text_2)))
        return scoring_outputs_from_core(self.llm_engine._core.score(text_1, text_2, params,
                                                                     loras))

    def _pool(self, task: str, prompts: Union[PromptType, Sequence[PromptType]],
              pooling_params: Optional[PoolingParams], truncate_prompt_tokens: Optional[int],
              lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None]
              ) -> list[PoolingRequestOutput]:
        prompt_list = [prompts] if is_single_prompt(prompts) else list(prompts)
        engine_prompts = [parse_prompt(prompt)[0] for prompt in prompt_list]
        params = (pooling_params or PoolingParams())._to_core(truncate_prompt_tokens)
        loras = core_lora_requests(lora_requests_per_prompt(lora_request, len(prompt_list)))
        rows = self.llm_engine._core.pool(task, engine_prompts, params, loras)
        return pooling_outputs_from_core(task, rows)

    def chat(self, messages: Union[Conversation, list[Conversation]],
             sampling_params: Union[SamplingParams, Sequence[SamplingParams], None] = None,
             use_tqdm: bool = True,
             lora_request: Union[LoRARequest, Sequence[Optional[LoRARequest]], None] = None,
             chat_template: Optional[str] = None, chat_template_content_format: str = "auto",
             add_generation_prompt: bool = True, continue_final_message: bool = False,
             tools: Optional[list[dict[str, Any]]] = None,
             chat_template_kwargs: Optional[dict[str, Any]] = None,
             mm_processor_kwargs: Optional[dict[str, Any]] = None) -> list[RequestOutput]:
        """Generates the next message of one conversation or of each of a list of them."""
        prompts = self.preprocess_chat(
            messages, chat_template=chat_template,
            chat_template_content_format=chat_template_content_format,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message, tools=tools,
            chat_template_kwargs=chat_template_kwargs, mm_processor_kwargs=mm_processor_kwargs)
        return self.generate(prompts, sampling_params, use_tqdm=use_tqdm,
                             lora_request=lora_request)

    def preprocess_chat(self, messages: Union[Conversation, list[Conversation]],
                        lora_request: Optional[LoRARequest] = None,
                        chat_template: Optional[str] = None,
                        chat_template_content_format: str = "auto",
                        add_generation_prompt: bool = True, continue_final_message: bool = False,
                        tools: Optional[list[dict[str, Any]]] = None,
                        chat_template_kwargs: Optional[dict[str, Any]] = None,
                        mm_processor_kwargs: Optional[dict[str, Any]] = None
                        ) -> list[TokensPrompt]:
        """One conversation, or each of a list of them, rendered with the chat template: a
        TokensPrompt per conversation, for generate() or the other LLM methods. An adapter's
        tokenizer is the base model's: lora_request changes nothing here."""
        if chat_template_content_format not in ("auto", "string"):
            raise NotImplementedError(f"chat_template_content_format="
                                      f"{chat_template_content_format!r} is not supported by "
                                      "vllm-cpp (contents are rendered as strings)")
        if mm_processor_kwargs is not None:
            raise NotImplementedError("mm_processor_kwargs is not supported by vllm-cpp")
        single = len(messages) == 0 or isinstance(messages[0], dict)
        conversations = [messages] if single else messages
        tokenizer = self.get_tokenizer()
        prompts = []
        for conversation in conversations:
            text = tokenizer.apply_chat_template(
                conversation, tools=tools, chat_template=chat_template,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message, tokenize=False,
                **(chat_template_kwargs or {}))
            prompts.append(TokensPrompt(prompt_token_ids=tokenizer.encode(
                text, add_special_tokens=False), prompt=text))
        return prompts

    def _params_per_prompt(self, sampling_params: Union[SamplingParams, Sequence[SamplingParams],
                                                        None],
                           num_prompts: int) -> list[SamplingParams]:
        if sampling_params is None:
            return [self.get_default_sampling_params()] * num_prompts
        if isinstance(sampling_params, SamplingParams):
            return [sampling_params] * num_prompts
        params_list = list(sampling_params)
        if len(params_list) != num_prompts:
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        for params in params_list:
            if not isinstance(params, SamplingParams):
                raise TypeError(f"sampling_params must be SamplingParams, not "
                                f"{type(params).__name__}")
        return params_list

    def _run(self, prompts: list[PromptType], params_list: list[SamplingParams],
             priorities: list[int], use_tqdm: bool,
             lora_list: Optional[list[Optional[LoRARequest]]] = None) -> list[RequestOutput]:
        engine = self.llm_engine
        request_ids: list[str] = []
        finished: dict[str, RequestOutput] = {}
        bar = ProgressBar(len(prompts), enabled=bool(use_tqdm))
        try:
            for prompt, params, priority, lora_request in zip(
                    prompts, params_list, priorities, lora_list or [None] * len(prompts)):
                request_id = str(next(self._request_counter))
                engine._add(request_id, prompt, params, RequestOutputKind.FINAL_ONLY, priority,
                            lora_request)
                request_ids.append(request_id)
            while engine.has_unfinished_requests():
                for output in engine.step():
                    if not output.finished:
                        continue
                    finished[output.request_id] = output
                    bar.update(len(output.prompt_token_ids),
                               sum(len(c.token_ids) for c in output.outputs))
        except BaseException:  # a refused prompt, an engine error or Ctrl-C: drop the batch
            engine.abort_request([r for r in request_ids if r not in finished])
            raise
        finally:
            bar.close()
        return [finished[request_id] for request_id in request_ids]
