#pragma once
// Where the decode-anatomy suite gets its per-stage numbers. Each backend measures what it can:
// the CPU source reads the engine's StageTimer (host wall time and entry counts per stage) and
// cannot see launches, syncs, copies or graphs; a CUDA source (CUPTI) fills those in. What a
// source cannot measure stays std::nullopt and is printed "n/a", never 0.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::engine {
class Backend;
}

namespace atlas::suites {

/// Totals of one stage over a measurement window (divide by tokens for per-token figures).
struct StageAnatomy {
  std::string stage;                       ///< engine stage name ("attention", "lm_head", ...)
  std::optional<double> calls;             ///< times the stage ran
  std::optional<double> launches;          ///< kernel launches issued by the stage
  std::optional<double> graph_launches;    ///< of those, launches replayed from a captured graph
  std::optional<double> host_syncs;        ///< host waits on the device (stream/event/device sync)
  std::optional<double> copies_h2d;        ///< host-to-device copies
  std::optional<double> copies_d2h;        ///< device-to-host copies
  std::optional<double> time_ns;           ///< stage time (host wall or device time: see basis)
};

struct AnatomyWindow {
  std::vector<StageAnatomy> stages;
  /// Adds another window's totals stage by stage (a value unknown in either stays unknown).
  void accumulate(const AnatomyWindow& other);
};

/// How the decode steps of a stretch of runs were executed (CUDA graphs).
struct GraphAccounting {
  double captures = 0;        ///< graphs captured (one per context bucket met the first time)
  double capture_ms = 0;      ///< host time spent capturing and instantiating them
  double replayed_steps = 0;  ///< decode steps run as one graph launch
  double eager_steps = 0;     ///< decode steps whose kernels were launched one by one
};

/// What a decode step must move through DRAM, for the roofline (CUDA: from the model's shapes).
struct RooflineModel {
  double bytes_per_token = 0;        ///< bytes one step must read (and write: recurrent states)
  double bandwidth_bytes_per_s = 0;  ///< measured device-to-device copy rate, read + write
  double weight_bytes = 0;           ///< the model's weights on the device
  double cache_bytes = 0;            ///< the device's last-level cache (L2)
};

class AnatomySource {
 public:
  virtual ~AnatomySource() = default;
  virtual std::string name() const = 0;        ///< "cpu-stage-timer", "cupti", ...
  virtual std::string time_basis() const = 0;  ///< "host wall clock", "GPU kernel time"
  /// Starts a window: clears and enables the counters.
  virtual void begin() = 0;
  /// Ends the window (disables the counters) and returns its totals.
  virtual AnatomyWindow end() = 0;
  /// Decode modes this source can switch its backend between, the backend's own first
  /// ({"graph", "eager"} for CUDA with graph replay on). The suite measures each and shows them
  /// side by side. Empty: one mode, nothing to compare.
  virtual std::vector<std::string> modes() const { return {}; }
  /// Switches the backend to `mode`, one of modes(), for the runs that follow.
  virtual void set_mode(std::string_view mode) { (void)mode; }
  /// Whether the backend's decode step replays a captured graph (its own mode, before any
  /// set_mode); nothing when the backend has no graphs.
  virtual std::optional<bool> graph_captured() const { return std::nullopt; }
  /// The graph accounting since the previous call (the first call: since the source was made);
  /// nothing for a backend without graphs.
  virtual std::optional<GraphAccounting> take_graph_accounting() { return std::nullopt; }
  /// Why capture is (or, in an eager mode, would be) refused in the current mode, one
  /// "<layer>: <reason>" each; empty: nothing refuses it (or the backend has no graphs).
  virtual std::vector<std::string> graph_vetoes() const { return {}; }
  /// The bytes model of a decode step at KV length `kv_len` and the bandwidth to judge it by;
  /// nothing for a backend without one (the CPU's).
  virtual std::optional<RooflineModel> roofline(int kv_len) {
    (void)kv_len;
    return std::nullopt;
  }
};

/// A target that can measure its own decode anatomy (EngineTarget does; HTTP targets do not).
class AnatomyProvider {
 public:
  virtual ~AnatomyProvider() = default;
  virtual std::unique_ptr<AnatomySource> make_anatomy_source() = 0;
};

/// Creates a source for a backend (anatomy_source_factory.cpp): a source registered for its
/// name(), the CUPTI source for the CUDA backend, else the CPU StageTimer source (every backend
/// has a StageTimer).
using AnatomySourceFactory = std::function<std::unique_ptr<AnatomySource>(engine::Backend&)>;
void register_anatomy_source(std::string backend_name, AnatomySourceFactory factory);
std::unique_ptr<AnatomySource> make_anatomy_source(engine::Backend& backend);

}  // namespace atlas::suites
