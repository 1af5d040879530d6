#ifdef ATLAS_HAVE_CUDA
#include "suites/decode_anatomy/cupti_tracer.hpp"

#include <cupti.h>

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "common/error.hpp"
#include "common/machine_error.hpp"

namespace atlas::suites {

struct CuptiTracer::State {
  CUpti_SubscriberHandle subscriber = nullptr;
  std::mutex mu;
  std::vector<TracedKernel> kernels;
  std::vector<TracedCopy> copies;
  std::vector<std::uint64_t> memset_starts;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> memsets;
  std::vector<std::uint64_t> sync_starts;
  std::vector<TraceWindow> windows;
  std::atomic<int> current{-1};  // window the API callbacks charge; -1 outside windows
  std::unordered_map<std::uint64_t, std::uint64_t> node_clones;  // clone node id -> original node id
};

namespace {

CuptiTracer::State* g_state = nullptr;

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  throw atlas::MachineError(std::string("CUPTI: ") + what + " failed: " + (s ? s : "unknown error"));
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr size_t kBytes = 8u << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = kBytes;
  *max_records = 0;
}

CopyDirection direction(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return CopyDirection::h2d;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return CopyDirection::d2h;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return CopyDirection::d2d;
    default: return CopyDirection::other;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CuptiTracer::State* st = g_state;
  CUpti_Activity* rec = nullptr;
  if (st != nullptr) {
    std::lock_guard<std::mutex> lock(st->mu);
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
          auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(rec);
          st->kernels.push_back({k->start, k->end, k->name ? k->name : "?", k->graphNodeId, k->graphId});
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(rec);
          const bool pageable = m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                                m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
          st->copies.push_back({m->start, m->end, m->bytes, direction(m->copyKind), pageable, m->graphId != 0});
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(rec);
          const std::uint64_t s0 = m->start, s1 = m->end;  // packed fields: copy before binding
          st->memsets.push_back({s0, s1});
          break;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
          auto* s = reinterpret_cast<CUpti_ActivitySynchronization2*>(rec);
          st->sync_starts.push_back(s->start);
          break;
        }
        default: break;
      }
    }
  }
  std::free(buffer);
}

/// Classifies an API by name (version suffixes like _v3020 vary between releases).
void count(ApiCalls& c, std::string_view fn) {
  ++c.total;
  if (fn.find("GraphLaunch") != std::string_view::npos) ++c.graph_launches;
  else if (fn.find("LaunchKernel") != std::string_view::npos || fn.find("LaunchCooperativeKernel") != std::string_view::npos)
    ++c.kernel_launches;
  else if (fn.find("Synchronize") != std::string_view::npos) ++c.syncs;
  else if (fn.find("Memcpy") != std::string_view::npos) ++c.copies;
  else if (fn.find("Memset") != std::string_view::npos) ++c.memsets;
  else if (fn.find("Malloc") != std::string_view::npos || fn.find("Free") != std::string_view::npos ||
           fn.find("MemAlloc") != std::string_view::npos)
    ++c.mallocs;
}

void CUPTIAPI on_api(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* st = static_cast<CuptiTracer::State*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    // Instantiation clones every node of the captured graph into the executable graph; kernel
    // records carry the clone's id.
    if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
    const auto* rd = static_cast<const CUpti_ResourceData*>(data);
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    std::uint64_t clone = 0, original = 0;
    if (gd == nullptr || cuptiGetGraphNodeId(gd->node, &clone) != CUPTI_SUCCESS ||
        cuptiGetGraphNodeId(gd->originalNode, &original) != CUPTI_SUCCESS)
      return;
    std::lock_guard<std::mutex> lock(st->mu);
    st->node_clones[clone] = original;
    return;
  }
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite != CUPTI_API_ENTER || cb->functionName == nullptr) return;
  const int w = st->current.load(std::memory_order_relaxed);
  if (w < 0) return;
  std::lock_guard<std::mutex> lock(st->mu);
  TraceWindow& win = st->windows[w];
  count(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? win.runtime : win.driver, cb->functionName);
}

}  // namespace

CopyCounts count_copies(const TraceWindow& w) {
  CopyCounts n;
  for (const auto& c : w.copies) {
    if (c.direction == CopyDirection::h2d) { n.h2d += 1; n.h2d_bytes += static_cast<double>(c.bytes); }
    if (c.direction == CopyDirection::d2h) { n.d2h += 1; n.d2h_bytes += static_cast<double>(c.bytes); }
    if (c.pageable) n.pageable += 1;
  }
  return n;
}

std::string short_kernel_name(std::string_view name) {
  int status = 0;
  const std::string raw(name);
  std::unique_ptr<char, void (*)(void*)> dem(abi::__cxa_demangle(raw.c_str(), nullptr, nullptr, &status), std::free);
  std::string s = status == 0 && dem ? std::string(dem.get()) : raw;
  for (const std::string anon = "(anonymous namespace)::"; s.find(anon) != std::string::npos;)
    s.erase(s.find(anon), anon.size());
  // Cut at the parameter list: the first '(' outside template arguments (those may hold casts
  // such as "(atlas::kernels::GemvInput)0").
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0) {
      s.resize(i);
      break;
    }
  }
  const auto angle = s.find('<');
  const auto head = s.substr(0, angle);
  std::size_t from = 0;
  if (const auto sp = head.rfind(' '); sp != std::string::npos) from = sp + 1;  // return type
  if (const auto colons = head.rfind("::"); colons != std::string::npos && colons + 2 > from) from = colons + 2;
  return s.substr(from);
}

CuptiTracer::CuptiTracer() : state_(std::make_unique<State>()) {
  if (g_state != nullptr) throw atlas::MachineError("CUPTI: only one tracer may be active");
  g_state = state_.get();
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable CONCURRENT_KERNEL");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable MEMCPY");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable MEMSET");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), "enable SYNCHRONIZATION");
  check(cuptiSubscribe(&state_->subscriber, on_api, state_.get()), "cuptiSubscribe");
  check(cuptiEnableDomain(1, state_->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "enable runtime API callbacks");
  check(cuptiEnableDomain(1, state_->subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "enable driver API callbacks");
  check(cuptiEnableCallback(1, state_->subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
        "enable graph-node-cloned callbacks");
}

std::uint64_t CuptiTracer::node_id(cudaGraphNode_t node) {
  std::uint64_t id = 0;
  check(cuptiGetGraphNodeId(node, &id), "cuptiGetGraphNodeId");
  return id;
}

std::unordered_map<std::uint64_t, std::uint64_t> CuptiTracer::node_clones() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->node_clones;
}

CuptiTracer::~CuptiTracer() {
  if (state_->subscriber) cuptiUnsubscribe(state_->subscriber);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  cuptiActivityFlushAll(1);
  g_state = nullptr;
}

void CuptiTracer::begin_window() {
  TraceWindow w;
  check(cuptiGetTimestamp(&w.t0), "cuptiGetTimestamp");
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->windows.push_back(std::move(w));
  state_->current.store(static_cast<int>(state_->windows.size()) - 1);
}

void CuptiTracer::end_window() {
  std::uint64_t t = 0;
  check(cuptiGetTimestamp(&t), "cuptiGetTimestamp");
  state_->current.store(-1);
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->windows.back().t1 = t;
}

std::vector<TraceWindow> CuptiTracer::finish() {
  state_->current.store(-1);
  check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<TraceWindow> out = std::move(state_->windows);
  auto find = [&](std::uint64_t t) -> TraceWindow* {
    // Windows are disjoint and in time order: binary search on t0.
    auto it = std::upper_bound(out.begin(), out.end(), t, [](std::uint64_t v, const TraceWindow& w) { return v < w.t0; });
    if (it == out.begin()) return nullptr;
    --it;
    return t < it->t1 ? &*it : nullptr;
  };
  for (auto& k : state_->kernels)
    if (auto* w = find(k.start)) {
      w->kernels.push_back(k);
      w->busy.push_back({k.start, k.end});
    }
  for (auto& c : state_->copies)
    if (auto* w = find(c.start)) {
      w->copies.push_back(c);
      w->busy.push_back({c.start, c.end});
    }
  for (auto& m : state_->memsets)
    if (auto* w = find(m.first)) {
      ++w->memsets;
      w->busy.push_back(m);
    }
  for (auto s : state_->sync_starts)
    if (auto* w = find(s)) ++w->sync_records;
  for (auto& w : out) {
    std::sort(w.kernels.begin(), w.kernels.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    std::sort(w.busy.begin(), w.busy.end());
  }
  state_->kernels.clear();
  state_->copies.clear();
  state_->memsets.clear();
  state_->sync_starts.clear();
  return out;
}

}  // namespace atlas::suites
#endif  // ATLAS_HAVE_CUDA
