#include "engine/model.hpp"

namespace atlas::engine {

std::span<const float> Model::own(std::vector<float> values) {
  // A unique_ptr per buffer keeps every span valid when storage_ itself reallocates.
  storage_.push_back(std::make_unique<std::vector<float>>(std::move(values)));
  return {storage_.back()->data(), storage_.back()->size()};
}

}  // namespace atlas::engine
