// Bindings of the engine's option structs: EngineArgs, SamplingParams and PoolingParams as plain
// mutable structs. The Python classes of the same names (engine_args.py, sampling_params.py) hold
// vLLM's full signatures and fill these in.
#include <pybind11/stl.h>

#include "engine/task_flag.h"
#include "python/bindings.h"
#include "vllm/engine_args.h"
#include "vllm/lora_request.h"
#include "vllm/pooling_params.h"
#include "vllm/sampling_params.h"

namespace py = pybind11;

namespace vllm::python {

void BindParams(py::module_& module) {
  py::class_<SpeculativeConfig>(module, "SpeculativeConfig")
      .def(py::init<>())
      .def_readwrite("method", &SpeculativeConfig::method)
      .def_readwrite("model", &SpeculativeConfig::model)
      .def_readwrite("num_speculative_tokens", &SpeculativeConfig::num_speculative_tokens)
      .def_readwrite("prompt_lookup_max", &SpeculativeConfig::prompt_lookup_max)
      .def_readwrite("prompt_lookup_min", &SpeculativeConfig::prompt_lookup_min);

  py::class_<EngineArgs>(module, "EngineArgs")
      .def(py::init<>())
      .def_readwrite("model", &EngineArgs::model)
      .def_readwrite("download_dir", &EngineArgs::download_dir)
      .def_readwrite("revision", &EngineArgs::revision)
      .def_readwrite("hf_token", &EngineArgs::hf_token)
      .def_readwrite("tokenizer", &EngineArgs::tokenizer)
      .def_readwrite("tokenizer_revision", &EngineArgs::tokenizer_revision)
      .def_readwrite("hf_config_path", &EngineArgs::hf_config_path)
      .def_readwrite("tokenizer_mode", &EngineArgs::tokenizer_mode)
      .def_readwrite("skip_tokenizer_init", &EngineArgs::skip_tokenizer_init)
      .def_readwrite("enable_prompt_embeds", &EngineArgs::enable_prompt_embeds)
      .def_readwrite("num_threads", &EngineArgs::num_threads)
      .def_readwrite("dtype", &EngineArgs::dtype)
      .def_readwrite("quantization", &EngineArgs::quantization)
      .def_readwrite("block_size", &EngineArgs::block_size)
      .def_readwrite("kv_cache_memory_bytes", &EngineArgs::kv_cache_memory_bytes)
      .def_readwrite("gpu_memory_utilization", &EngineArgs::gpu_memory_utilization)
      .def_readwrite("kv_cache_dtype", &EngineArgs::kv_cache_dtype)
      .def_readwrite("override_attention_dtype", &EngineArgs::override_attention_dtype)
      .def_readwrite("enable_prefix_caching", &EngineArgs::enable_prefix_caching)
      .def_readwrite("max_model_len", &EngineArgs::max_model_len)
      .def_readwrite("max_num_seqs", &EngineArgs::max_num_seqs)
      .def_readwrite("max_num_batched_tokens", &EngineArgs::max_num_batched_tokens)
      .def_readwrite("scheduling_policy", &EngineArgs::scheduling_policy)
      .def_readwrite("disable_hybrid_kv_cache_manager",
                     &EngineArgs::disable_hybrid_kv_cache_manager)
      .def_readwrite("speculative_config", &EngineArgs::speculative_config)
      .def_readwrite("max_logprobs", &EngineArgs::max_logprobs)
      .def_readwrite("runner", &EngineArgs::runner)
      .def_readwrite("convert", &EngineArgs::convert)
      .def_readwrite("hf_overrides", &EngineArgs::hf_overrides)
      .def_readwrite("generation_config", &EngineArgs::generation_config)
      .def_readwrite("override_generation_config", &EngineArgs::override_generation_config)
      .def_readwrite("logprobs_mode", &EngineArgs::logprobs_mode)
      .def_readwrite("disable_sliding_window", &EngineArgs::disable_sliding_window)
      .def_readwrite("rope_scaling", &EngineArgs::rope_scaling)
      .def_readwrite("rope_theta", &EngineArgs::rope_theta)
      .def_readwrite("pooler_config", &EngineArgs::pooler_config)
      .def_readwrite("enable_lora", &EngineArgs::enable_lora)
      .def_readwrite("max_loras", &EngineArgs::max_loras)
      .def_readwrite("max_lora_rank", &EngineArgs::max_lora_rank)
      .def_readwrite("max_cpu_loras", &EngineArgs::max_cpu_loras)
      .def_readwrite("lora_dtype", &EngineArgs::lora_dtype);
  // vllm_cpp.lora.request.LoRARequest's engine form.
  py::class_<LoraRequest>(module, "LoraRequest")
      .def(py::init<>())
      .def_readwrite("lora_name", &LoraRequest::lora_name)
      .def_readwrite("lora_int_id", &LoraRequest::lora_int_id)
      .def_readwrite("lora_path", &LoraRequest::lora_path)
      .def_readwrite("base_model_name", &LoraRequest::base_model_name);
  // LLM(task=...): vLLM 0.10's deprecated spelling of runner / convert, mapped as --task is.
  module.def(
      "apply_deprecated_task",
      [](EngineArgs& args, const std::string& task) {
        if (Status applied = ApplyDeprecatedTask(task, &args); !applied.ok()) {
          throw py::value_error(applied.message());
        }
      },
      py::arg("args"), py::arg("task"));

  py::class_<PoolingParams>(module, "PoolingParams")
      .def(py::init<>())
      .def_readwrite("truncate_prompt_tokens", &PoolingParams::truncate_prompt_tokens)
      .def_readwrite("dimensions", &PoolingParams::dimensions)
      .def_readwrite("normalize", &PoolingParams::normalize)
      .def_readwrite("use_activation", &PoolingParams::use_activation);

  py::enum_<RequestOutputKind>(module, "RequestOutputKind")
      .value("CUMULATIVE", RequestOutputKind::kCumulative)
      .value("DELTA", RequestOutputKind::kDelta)
      .value("FINAL_ONLY", RequestOutputKind::kFinalOnly);

  py::class_<StructuredOutputsParams>(module, "StructuredOutputsParams")
      .def(py::init<>())
      .def_readwrite("json", &StructuredOutputsParams::json)
      .def_readwrite("regex", &StructuredOutputsParams::regex)
      .def_readwrite("choice", &StructuredOutputsParams::choice)
      .def_readwrite("grammar", &StructuredOutputsParams::grammar)
      .def_readwrite("json_object", &StructuredOutputsParams::json_object)
      .def_readwrite("disable_any_whitespace", &StructuredOutputsParams::disable_any_whitespace)
      .def_readwrite("disable_additional_properties",
                     &StructuredOutputsParams::disable_additional_properties)
      .def_readwrite("whitespace_pattern", &StructuredOutputsParams::whitespace_pattern);

  // Every kSamplingFields row becomes an attribute; the three fields of their own shape follow.
  py::class_<SamplingParams> sampling_params(module, "SamplingParams");
  sampling_params.def(py::init<>());
  py::list field_names;
  py::list generation_config_field_names;
  ForEachSamplingField([&](const auto& field) {
    sampling_params.def_readwrite(field.name, field.member);
    field_names.append(field.name);
    if (field.sources.generation_config) generation_config_field_names.append(field.name);
  });
  sampling_params.def_readwrite("logit_bias", &SamplingParams::logit_bias)
      .def_readwrite("output_kind", &SamplingParams::output_kind)
      .def_readwrite("structured_outputs", &SamplingParams::structured_outputs)
      // The empty string when valid; otherwise vLLM's message for the first invalid field.
      .def("validate", &SamplingParams::Validate);
  // The rows' names in vLLM's order: vllm_cpp.SamplingParams takes each as a keyword argument.
  module.attr("SAMPLING_FIELD_NAMES") = py::tuple(field_names);
  // The rows a model's generation_config.json may set (its default_sampling_params).
  module.attr("GENERATION_CONFIG_FIELD_NAMES") = py::tuple(generation_config_field_names);
}

}  // namespace vllm::python
