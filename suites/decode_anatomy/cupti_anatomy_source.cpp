#include "suites/decode_anatomy/cupti_anatomy_source.hpp"

#ifdef ATLAS_HAVE_CUDA
#include <algorithm>
#include <map>
#include <string>

#include "engine/cuda/cuda_backend.hpp"
#include "engine/cuda/cuda_decoder.hpp"
#include "engine/stage.hpp"
#include "suites/decode_anatomy/cuda_copy_bandwidth.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"
#include "suites/decode_anatomy/cupti_kernel_stages.hpp"
#include "suites/decode_anatomy/host_event_stages.hpp"

namespace atlas::suites {
namespace {

class CuptiAnatomySource final : public AnatomySource {
 public:
  explicit CuptiAnatomySource(engine::cuda::CudaDecoder& dec)
      : dec_(&dec),
        graphs_(dec.graphs_requested()),
        captured_(dec.graphs_enabled()),
        host_routing_(dec.moe_host_routing()),
        has_moe_(dec.set_moe_host_routing(dec.moe_host_routing())) {}
  ~CuptiAnatomySource() override {
    dec_->set_step_observer({});
    dec_->set_graphs(graphs_);  // the backend's own mode again
    dec_->set_moe_host_routing(host_routing_);
  }

  /// graph (when asked for, even if a veto keeps it from replaying: the column then says so),
  /// eager, and for a model with moe layers routed on the device, eager with the routing on the
  /// host: the investigation's three columns, launch cost and barrier cost apart.
  std::vector<std::string> modes() const override {
    std::vector<std::string> m;
    if (graphs_) m.push_back("graph");
    m.push_back("eager");
    if (has_moe_ && !host_routing_) m.push_back("eager-host-routing");
    if (m.size() < 2) return {};
    return m;
  }
  void set_mode(std::string_view mode) override {
    dec_->set_graphs(mode == "graph");
    dec_->set_moe_host_routing(mode == "eager-host-routing" ? true : host_routing_);
    attribution_.clear();  // time_basis() describes the current mode's steps
  }
  std::optional<bool> graph_captured() const override { return captured_; }
  std::vector<std::string> graph_vetoes() const override {
    // The blocks' vetoes in the current mode, graphs asked for or not: the record lists them by
    // layer for every column (host routing's are its moe layers).
    std::vector<std::string> out;
    for (const auto& v : dec_->vetoes()) out.push_back(v.layer + ": " + v.reason);
    return out;
  }
  std::optional<RooflineModel> roofline(int kv_len) override {
    RooflineModel m;
    m.bytes_per_token = static_cast<double>(dec_->bytes_per_token(kv_len));
    m.weight_bytes = static_cast<double>(dec_->memory_plan().weights);
    int device = 0, l2 = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess)
      m.cache_bytes = l2;
    m.bandwidth_bytes_per_s = copy_bandwidth();
    return m;
  }
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
    std::vector<TapeHostEvent> tape_events;
    for (const auto& e : dec_->step_host_events()) {
      using K = engine::cuda::HostEvent::Kind;
      tape_events.push_back({std::string(engine::to_string(e.stage)),
                             e.kind == K::h2d   ? TapeHostEvent::Kind::h2d
                             : e.kind == K::d2h ? TapeHostEvent::Kind::d2h
                                                : TapeHostEvent::Kind::sync});
    }
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
      const WindowStageKernels ks = stage_kernels(w, graph, stages);
      ++attribution_[std::string(to_string(ks.how))];
      for (const auto& [name, k] : ks.by_stage) {
        StageAnatomy& s = stage(name);
        *s.time_ns += k.ns;
        *s.calls += k.kernels;
        *s.launches += k.kernels;
        *s.graph_launches += k.graph_kernels;
      }
      // The step's H2D copy carries the token id and position the embedding reads; its D2H copy
      // and final host sync return the sampled token; a block's own copies and syncs (host
      // routing) go to the stage that asked for them, as the engine's tape recorded.
      const CopyCounts copies = count_copies(w);
      for (const auto& [name, n] :
           charge_host_events(copies.h2d, copies.d2h, static_cast<int>(w.runtime.syncs), tape_events)) {
        StageAnatomy& s = stage(name);
        *s.copies_h2d += n.copies_h2d;
        *s.copies_d2h += n.copies_d2h;
        *s.host_syncs += n.host_syncs;
      }
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
  bool graphs_;        // graphs asked for when the source was made (the backend's own mode)
  bool captured_;      // ... and whether its decode step then replayed one (no veto)
  bool host_routing_;  // moe routing on the host when the source was made
  bool has_moe_;

  /// The device's copy bandwidth, measured once per process (a 2 GiB copy, 512 MiB when the
  /// model leaves too little memory); 0 when not even that fits.
  static double copy_bandwidth() {
    static const double bw = [] {
      for (std::size_t bytes : {std::size_t{2} << 30, std::size_t{512} << 20}) {
        try {
          return measure_copy_bandwidth(bytes);
        } catch (const std::exception&) {
          cudaGetLastError();  // an out-of-memory cudaMalloc is not sticky; clear it
        }
      }
      return 0.0;
    }();
    return bw;
  }
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
