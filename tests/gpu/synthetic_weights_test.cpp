// Synthetic preset weights generated on the device equal, tensor by tensor, the weights
// make-model writes on the host for that preset and seed (engine/formats/synthetic_weights.hpp):
// a digest of every tensor's device bytes after a load from the host model (or from the
// safetensors directory make-model writes) against a load of the same preset with no host
// weights. The presets cover dense tied and untied heads, q/k norms, every hybrid kind, and
// (qwen3-0.6b, qwen3-next-e16-l4) tensors large enough to take several staging chunks, where a
// generator's row offset is wrong first.
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/cuda/cuda_decoder.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/model.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/qwen3_next_hf_writer.hpp"
#include "tests/gpu/gpu_test_util.hpp"
#include "tests/test_data.hpp"

using namespace atlas;
using namespace atlas::test::gpu;
using engine::cuda::CudaDecoder;
using engine::cuda::TensorDigest;

namespace {

/// A preset as the CUDA backend gets it from `preset:<name>@<seed>` (Engine::open with backend
/// cuda): config, tokenizer and source, no weight spans.
engine::Model config_only(const std::string& name, std::uint64_t seed) {
  engine::LoadOptions lo;
  lo.max_seq_len = 256;
  engine::Model m = engine::load_model_for_backend("preset:" + name + "@" + std::to_string(seed), lo, "cuda");
  REQUIRE(m.weights.layers.empty());
  return m;
}

std::vector<TensorDigest> digests(const engine::Model& m, kernels::ElemType wt, std::uint64_t seed) {
  CudaDecoder d(m, decoder_options(wt, 256), seed);
  return d.weight_digests();
}

void check_equal(const std::vector<TensorDigest>& host, const std::vector<TensorDigest>& device) {
  REQUIRE(host.size() == device.size());
  CHECK(host.size() > 3);
  int differ = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    CAPTURE(host[i].name);
    REQUIRE(host[i].name == device[i].name);
    CHECK(host[i].bytes == device[i].bytes);
    if (host[i].hash != device[i].hash && differ++ < 5) FAIL_CHECK(host[i].name << ": device bytes differ from the host model's");
  }
  CHECK(differ == 0);
}

}  // namespace

TEST_CASE("synthetic preset weights generated on the device equal make-model's host weights, tensor by tensor") {
  ATLAS_REQUIRE_GPU();
  struct Case {
    const char* preset;
    kernels::ElemType wt;
  };
  const Case cases[] = {{"tiny-llama", kernels::ElemType::f32},     {"tiny-llama", kernels::ElemType::bf16},
                        {"tiny-qwen3", kernels::ElemType::f32},     {"tiny-qwen3", kernels::ElemType::bf16},
                        {"qwen3-next-tiny", kernels::ElemType::f32}, {"qwen3-next-tiny", kernels::ElemType::bf16},
                        {"qwen3-0.6b", kernels::ElemType::bf16},    {"qwen3-next-e16-l4", kernels::ElemType::bf16}};
  for (const Case& c : cases) {
    CAPTURE(c.preset);
    CAPTURE(c.wt == kernels::ElemType::bf16 ? "bf16" : "f32");
    const std::uint64_t seed = 29;
    engine::Model host = engine::make_preset_model(c.preset, seed, 256);
    check_equal(digests(host, c.wt, seed), digests(config_only(c.preset, seed), c.wt, seed));
  }
}

TEST_CASE("synthetic qwen3-next-tiny on the device equals the float32 safetensors make-model writes for it") {
  ATLAS_REQUIRE_GPU();
  const auto dir = atlas::test::scratch_dir("synthetic_vs_file");
  const engine::ModelConfig c = engine::find_preset("qwen3-next-tiny").config;
  engine::write_qwen3_next_hf_dir(dir, c, 11, engine::DType::f32);
  engine::Model file = engine::load_model(dir);
  file.config.max_seq_len = 256;
  for (const kernels::ElemType wt : {kernels::ElemType::f32, kernels::ElemType::bf16})
    check_equal(digests(file, wt, 0), digests(config_only("qwen3-next-tiny", 11), wt, 11));
  // A different seed is a different model: the check can fail.
  const auto other = digests(config_only("qwen3-next-tiny", 12), kernels::ElemType::f32, 12);
  const auto same = digests(file, kernels::ElemType::f32, 0);
  REQUIRE(other.size() == same.size());
  int differ = 0;
  for (std::size_t i = 0; i < other.size(); ++i) differ += other[i].hash != same[i].hash;
  CHECK(differ == static_cast<int>(other.size()));
}

#endif  // ATLAS_HAVE_CUDA
