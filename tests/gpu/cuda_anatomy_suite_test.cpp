// The decode-anatomy suite on the CUDA backend with a hybrid MoE model: the investigation's three
// columns (graph / eager / eager with MoE routing on the host), the host-routing copies and syncs
// charged to the router's stage, the latency series, a depth, and the roofline in the record.
#ifdef ATLAS_HAVE_CUDA  // a CPU build has no CUDA decoder (cuda_decoder.hpp needs cuBLAS)
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "engine/cuda/cuda_decoder.hpp"
#include "engine/engine.hpp"
#include "engine/formats/presets.hpp"
#include "suites/decode_anatomy/cupti_anatomy_source.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/engine_target.hpp"
#include "tests/gpu/gpu_test_util.hpp"

using namespace atlas;
using engine::cuda::CudaDecoder;

TEST_CASE("qwen3-next-tiny: MoE routing switched to the host and back at run time: vetoed while on, same bits, graphs after") {
  ATLAS_REQUIRE_GPU();
  const engine::Model m = engine::make_preset_model("qwen3-next-tiny", 17, 512);
  engine::cuda::DecoderOptions o;
  o.wtype = kernels::ElemType::bf16;
  o.max_seq = 512;
  CudaDecoder ref(m, o), dec(m, o);
  REQUIRE(dec.graphs_enabled());
  const std::vector<int> prompt = {9, 8, 7, 6, 5};
  int a = ref.run(prompt, 0, false), b = dec.run(prompt, 0, false);
  ref.reset_counters();
  dec.reset_counters();
  const int steps = 12, layers = atlas::test::gpu::moe_layers(m.config);  // host-routed layers
  REQUIRE(layers > 0);
  for (int s = 0; s < steps; ++s) {
    REQUIRE(a == b);
    if (s == 4) {
      CHECK(dec.set_moe_host_routing(true));
      CHECK_FALSE(dec.graphs_enabled());
      CHECK(dec.vetoes().size() == static_cast<std::size_t>(layers));
    }
    if (s == 8) {
      CHECK(dec.set_moe_host_routing(false));
      CHECK(dec.graphs_enabled());
    }
    a = ref.run(std::span<const int>(&a, 1), 5 + s, true);
    const std::vector<float> la(ref.logits().begin(), ref.logits().end());
    b = dec.run(std::span<const int>(&b, 1), 5 + s, true);
    REQUIRE(std::memcmp(la.data(), dec.logits().data(), la.size() * sizeof(float)) == 0);
  }
  CHECK(dec.counters().graph_steps == 8);
  CHECK(dec.counters().eager_steps == 4);
  CHECK(dec.counters().host_syncs == steps + 4 * layers);
  CHECK(ref.routing_fingerprint() == dec.routing_fingerprint());
}

TEST_CASE("decode-anatomy on CUDA, qwen3-next-tiny: three columns, host-routing syncs in moe_router, series, depth, roofline") {
  ATLAS_REQUIRE_GPU();
  // This binary links the CUDA code statically: its CUPTI source is registered by hand (the
  // suite's weak reference does not pull it out of the static library).
  suites::register_anatomy_source("cuda", &suites::make_cupti_anatomy_source);
  engine::EngineOptions eo;
  eo.model = "preset:qwen3-next-tiny";
  eo.backend.name = "cuda";
  suites::EngineTarget target(eo);
  suites::SuiteOptions so;
  so.warmup = 1;
  so.repetitions = 2;
  so.config = {{"prompt_tokens", 16}, {"decode_tokens", 8}, {"series_tokens", 96}, {"depths", {300}}};
  const auto r = suites::run_decode_anatomy_suite(target, so);
  const int layers = atlas::test::gpu::moe_layers(engine::find_preset("qwen3-next-tiny").config);  // host-routed layers
  REQUIRE(layers > 0);
  auto one = [&](const std::string& name) {
    INFO(name);
    REQUIRE(r.metrics.count(name) == 1);
    return r.metrics.at(name).samples.at(0);
  };
  // graph: one sync per token (the sampled token), all steps replayed
  CHECK(one("graph_replay_fraction") == 1.0);
  CHECK(one("host_syncs_per_token/moe_router") == 0.0);
  CHECK(one("host_syncs_per_token/sample") == 1.0);
  // eager, host routing: per moe layer a D2H of the logits, a sync and an H2D of the choice, in
  // the router's stage; the step's own copies and sync stay in embed and sample
  CHECK(one("eager-host-routing/graph_replay_fraction") == 0.0);
  CHECK(one("eager-host-routing/host_syncs_per_token/moe_router") == layers);
  CHECK(one("eager-host-routing/copies_d2h_per_token/moe_router") == layers);
  CHECK(one("eager-host-routing/copies_h2d_per_token/moe_router") == layers);
  CHECK(one("eager-host-routing/host_syncs_per_token/sample") == 1.0);
  CHECK(one("eager-host-routing/copies_h2d_per_token/embed") == 1.0);
  // the same tokens and the same experts in every column
  CHECK(one("eager/output_fingerprint") == one("output_fingerprint"));
  CHECK(one("eager-host-routing/output_fingerprint") == one("output_fingerprint"));
  CHECK(one("eager/routing_fingerprint") == one("routing_fingerprint"));
  CHECK(one("eager-host-routing/routing_fingerprint") == one("routing_fingerprint"));
  CHECK(r.details["graph_vetoes"]["eager-host-routing"].size() == static_cast<std::size_t>(layers));
  // the series, a depth with the modes agreeing, the roofline
  CHECK(r.details["latency_series"]["graph"]["n"] == 95);
  CHECK(one("itl_p50_us") > 0.0);
  CHECK(one("itl_max_us") >= one("itl_p99_us"));
  CHECK(one("depth=300/modes_agree") == 1.0);
  CHECK(one("bytes_per_token") > 0.0);
  CHECK(r.details["roofline"]["bandwidth_GBps"].get<double>() > 1000.0);  // an H100/H200 copies > 1 TB/s
  const std::string notes = r.details["notes"].dump();
  INFO(notes);
  CHECK(notes.find("differs") == std::string::npos);
}
#endif
