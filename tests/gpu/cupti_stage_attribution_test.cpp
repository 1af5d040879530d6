// CUPTI attribution of decode kernels to stages: graph replays through the node ids recorded at
// capture (and the executable's clones of them), eager steps by launch order; per-token copies,
// graph launches and kernel counts as CUPTI sees them.
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include "engine/cuda/cuda_decoder.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"
#include "suites/decode_anatomy/cupti_kernel_stages.hpp"
#include "tests/gpu/gpu_test_util.hpp"

using namespace atlas;
using namespace atlas::test::gpu;
using engine::cuda::CudaDecoder;

TEST_CASE("CUPTI maps replayed graph kernels to stages by node id, eager kernels by launch order") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_qwen3(), 7);
  CudaDecoder dec(host.model, decoder_options(kernels::ElemType::bf16, 256));
  std::vector<int> prompt = {3, 1, 4, 1, 5};
  int tok = dec.run(prompt, 0, false);
  int pos = static_cast<int>(prompt.size());
  tok = dec.run(std::span<const int>(&tok, 1), pos++, false);  // captures this bucket's graph
  REQUIRE(dec.counters().graph_captures == 1);
  const auto& order = dec.step_kernel_stages();
  REQUIRE(dec.graph_kernel_nodes().size() == order.size());

  for (bool graphs : {true, false}) {
    CAPTURE(graphs);
    dec.set_graphs(graphs);
    std::vector<suites::TraceWindow> windows;
    suites::GraphStageMap map;
    {
      suites::CuptiTracer tracer;
      dec.reinstantiate_graphs();
      for (int s = 0; s < 4; ++s) {
        tracer.begin_window();
        tok = dec.run(std::span<const int>(&tok, 1), pos++, false);
        tracer.end_window();
      }
      windows = tracer.finish();
      map = suites::GraphStageMap(dec, tracer);
    }
    REQUIRE(windows.size() == 4);
    // Every kernel node has an id, and the executable's clones map to the same stages.
    CHECK(map.size() >= order.size());
    for (const auto& w : windows) {
      const auto ks = suites::attribute_stages(w, map, order);
      CHECK(ks.how == (graphs ? suites::StageAttribution::graph_node_id : suites::StageAttribution::launch_order));
      REQUIRE(ks.stage.size() == order.size());
      // One stream, a chain: the stages come back in launch order.
      CHECK(ks.stage == order);
      CHECK(w.kernels.size() == order.size());
      CHECK(w.runtime.graph_launches == (graphs ? 1 : 0));
      CHECK(w.runtime.kernel_launches == (graphs ? 0 : static_cast<std::int64_t>(order.size())));
      int h2d = 0, d2h = 0, pageable = 0;
      for (const auto& c : w.copies) {
        h2d += c.direction == suites::CopyDirection::h2d;
        d2h += c.direction == suites::CopyDirection::d2h;
        pageable += c.pageable;
      }
      CHECK(h2d == 1);
      CHECK(d2h == 1);
      CHECK(pageable == 0);
      const auto ns = suites::exclusive_kernel_ns(w);
      double sum = 0;
      for (double v : ns) sum += v;
      CHECK(sum > 0.0);
    }
  }
}
#endif  // ATLAS_HAVE_CUDA

