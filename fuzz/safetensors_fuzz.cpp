// safetensors: the 8-byte header length, the JSON header (dtypes, shapes, data_offsets tiling the
// data section, __metadata__).
#include "engine/error.hpp"
#include "engine/formats/safetensors.hpp"
#include "fuzz/fuzz_target.hpp"

ATLAS_FUZZ_TARGET(safetensors) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("model.safetensors", data, size);
  try {
    const engine::SafetensorsFile f = engine::read_safetensors(path);
    const auto* begin = reinterpret_cast<const std::byte*>(f.map->bytes().data());
    std::size_t covered = 0;
    for (const auto& [name, t] : f.tensors) {
      const auto* p = t.data.data();
      fuzz::check(t.data.empty() || (p >= begin + 8 && p + t.data.size() <= begin + size), "tensor bytes inside the file");
      covered += t.data.size();
    }
    fuzz::check(covered <= size, "tensors do not overlap");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
