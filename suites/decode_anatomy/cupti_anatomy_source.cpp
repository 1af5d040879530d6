#include "suites/decode_anatomy/cupti_anatomy_source.hpp"

#ifdef ATLAS_HAVE_CUDA
#include <algorithm>
#include <map>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_decoder.hpp"
#include "engine/stage.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"
#include "suites/decode_anatomy/cupti_kernel_stages.hpp"

namespace atlas::suites {
namespace {

class CuptiAnatomySource final : public AnatomySource {
 public:
  explicit CuptiAnatomySource(engine::cuda::CudaDecoder& dec) : dec_(&dec), graphs_(dec.graphs_enabled()) {}
  ~CuptiAnatomySource() override {
    dec_->set_step_observer({});
    if (graphs_) dec_->set_graphs(true);  // the backend's own mode again
  }

  std::vector<std::string> modes() const override {
    if (!graphs_) return {};
    return {"graph", "eager"};
  }
  void set_mode(std::string_view mode) override {
    dec_->set_graphs(mode == "graph");
    attribution_.clear();  // time_basis() describes the current mode's steps
  }
  std::optional<bool> graph_captured() const override { return graphs_; }
  std::optional<GraphAccounting> take_graph_accounting() override {
    const auto& c = dec_->counters();
    GraphAccounting now{static_cast<double>(c.graph_captures), dec_->graph_capture_ms(),
                        static_cast<double>(c.graph_steps), static_cast<double>(c.eager_steps)};
    GraphAccounting d = now;
    // Counters reset by someone else since the last call: count from zero.
    if (now.replayed_steps >= last_.replayed_steps && now.eager_steps >= last_.eager_steps && now.captures >= last_.captures) {
      d.captures -= last_.captures;
      d.replayed_steps -= last_.replayed_steps;
      d.eager_steps -= last_.eager_steps;
    }
    d.capture_ms = now.capture_ms >= last_.capture_ms ? now.capture_ms - last_.capture_ms : now.capture_ms;
    last_ = now;
    return d;
  }

  std::string name() const override { return "cupti"; }
  std::string time_basis() const override {
    std::string how;
    for (const auto& [k, n] : attribution_) how += (how.empty() ? "" : " / ") + k;
    return "GPU kernel time (CUPTI), charged exclusively; kernels to stages by " +
           (how.empty() ? std::string("graph node id (replays) or launch order (eager)") : how);
  }

  void begin() override {
    tracer_ = std::make_unique<CuptiTracer>();
    // New executables while subscribed: the tracer maps their node clones to captured nodes.
    dec_->reinstantiate_graphs();
    CuptiTracer* t = tracer_.get();
    dec_->set_step_observer([t](bool start) {
      if (start) t->begin_window();
      else t->end_window();
    });
  }

  AnatomyWindow end() override {
    dec_->set_step_observer({});
    const std::vector<TraceWindow> windows = tracer_->finish();
    const GraphStageMap graph(*dec_, *tracer_);
    tracer_.reset();
    const auto& stages = dec_->step_kernel_stages();
    std::map<std::string, StageAnatomy> by;
    // Every stage the model's blocks report, a zero included (a stage fused into another's
    // kernel, e.g. attn_norm in the q/k/v GEMV), so the record's metric set does not depend on
    // what a step happened to launch.
    for (const engine::Stage st : dec_->stages()) {
      StageAnatomy s;
      s.stage = std::string(engine::to_string(st));
      s.calls = s.launches = s.graph_launches = s.host_syncs = s.copies_h2d = s.copies_d2h = s.time_ns = 0.0;
      by[s.stage] = s;
    }
    auto stage = [&](const std::string& n) -> StageAnatomy& {
      auto it = by.find(n);
      if (it != by.end()) return it->second;
      StageAnatomy s;
      s.stage = n;
      s.calls = s.launches = s.graph_launches = s.host_syncs = s.copies_h2d = s.copies_d2h = s.time_ns = 0.0;
      return by[n] = s;
    };
    for (const auto& w : windows) {
      const KernelStages ks = attribute_stages(w, graph, stages);
      ++attribution_[std::string(to_string(ks.how))];
      const std::vector<double> ns = exclusive_kernel_ns(w);
      for (std::size_t i = 0; i < w.kernels.size(); ++i) {
        const auto& k = w.kernels[i];
        StageAnatomy& s = stage(ks.stage.empty() ? "unattributed" : std::string(engine::to_string(ks.stage[i])));
        *s.time_ns += ns[i];
        *s.calls += 1;
        *s.launches += 1;
        if (k.graph_id != 0) *s.graph_launches += 1;
      }
      // The step's H2D copy carries the token id and position the embedding reads; its D2H copy
      // and host sync return the sampled token.
      for (const auto& c : w.copies) {
        if (c.direction == CopyDirection::h2d) *stage("embed").copies_h2d += 1;
        if (c.direction == CopyDirection::d2h) *stage("sample").copies_d2h += 1;
      }
      *stage("sample").host_syncs += static_cast<double>(w.runtime.syncs);
    }
    AnatomyWindow out;
    for (auto& [n, s] : by) out.stages.push_back(s);
    return out;
  }

 private:
  engine::cuda::CudaDecoder* dec_;
  GraphAccounting last_;
  std::unique_ptr<CuptiTracer> tracer_;
  std::map<std::string, int> attribution_;  // decode steps per attribution method
  bool graphs_;                              // the decoder's mode when the source was made
};

}  // namespace

std::unique_ptr<AnatomySource> make_cupti_anatomy_source(engine::Backend& backend) {
  engine::cuda::CudaDecoder* dec = engine::cuda_decoder_of(backend);
  if (dec == nullptr) return nullptr;
  return std::make_unique<CuptiAnatomySource>(*dec);
}

}  // namespace atlas::suites
#else
namespace atlas::suites {
std::unique_ptr<AnatomySource> make_cupti_anatomy_source(engine::Backend&) { return nullptr; }
}  // namespace atlas::suites
#endif
