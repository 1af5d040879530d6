# The library sources the fuzz targets link: the fuzz build (ATLAS_FUZZ) compiles only these
# into the layer libraries (cmake/dependencies.cmake, atlas_fuzz_filter), not all 183, since its
# clang ASan + UBSan + coverage compiles are a CI stage of their own (README "Fuzzing and
# sanitizers"). Paths relative to the source tree; common/build_paths.cpp is generated into the
# build tree. Kept complete by ctest "fuzz_sources" (fuzz/check_sources.cmake), which reads the
# linker's map of atlas_fuzz_replay (every harness in one binary, same libraries) in the plain
# and sanitizer builds and names any linked source missing here: add it, or the fuzz stage's
# link fails with undefined references.
set(ATLAS_FUZZ_LIB_SOURCES
  chat/chat_template.cpp
  chat/jinja_evaluator.cpp
  chat/jinja_filters.cpp
  chat/jinja_lexer.cpp
  chat/jinja_parser.cpp
  chat/jinja_segments.cpp
  chat/jinja_value.cpp
  common/atomic_file.cpp
  common/build_paths.cpp
  common/json_depth.cpp
  common/json_file.cpp
  common/json_text.cpp
  common/machine_error.cpp
  common/termination.cpp
  engine/formats/dtype.cpp
  engine/formats/gguf.cpp
  engine/formats/hf_config.cpp
  engine/formats/json_input.cpp
  engine/formats/llama2c.cpp
  engine/formats/load_model.cpp
  engine/formats/mapped_file.cpp
  engine/formats/presets.cpp
  engine/formats/qwen3_next_tensors.cpp
  engine/formats/safetensors.cpp
  engine/formats/synthetic_weights.cpp
  engine/formats/weight_builder.cpp
  engine/model.cpp
  engine/model_config.cpp
  engine/tokenizer/bpe.cpp
  engine/tokenizer/byte_tokenizer.cpp
  engine/tokenizer/spm.cpp
  engine/tokenizer/tokenizer.cpp
  engine/tokenizer/tokenizer_json.cpp
  engine/tokenizer/unicode.cpp
  engine/tokenizer/unicode_tables.cpp
  gates/baseline.cpp
  gates/json_fields.cpp
  records/metric.cpp
  records/record_io.cpp
  records/stats.cpp
  records/summary.cpp
  server/openai_request.cpp
  server/ordered_json_parse.cpp
  server/tool_calls.cpp
  suites/bfcl/decode.cpp
  suites/bfcl/py_eval.cpp
  suites/bfcl/py_lexer.cpp
  suites/bfcl/py_parser.cpp
  suites/bfcl/py_unparse.cpp
  suites/bfcl/py_value.cpp
  suites/endpoint/openai_logprobs.cpp
  suites/endpoint/openai_stream.cpp
  suites/endpoint/sse_parser.cpp
  suites/resources.cpp
  suites/suite_config.cpp
  suites/suite_options.cpp
)
