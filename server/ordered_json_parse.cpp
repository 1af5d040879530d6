#include "server/ordered_json_parse.hpp"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace atlas::server {

namespace {
using J = nlohmann::ordered_json;
// ordered_map is a std::vector of pairs; members are appended to it directly.
using Members = std::vector<std::pair<const std::string, J>>;

class Builder final : public nlohmann::json_sax<J> {
 public:
  J root;

  bool null() override { return put(J(nullptr)) != nullptr; }
  bool boolean(bool v) override { return put(J(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return put(J(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return put(J(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override { return put(J(v)) != nullptr; }
  bool string(string_t& v) override { return put(J(std::move(v))) != nullptr; }
  bool binary(binary_t& v) override { return put(J::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) override {
    open_.push_back({put(J::object()), {}});
    return true;
  }
  bool key(string_t& k) override {
    Open& o = open_.back();
    Members& m = o.value->get_ref<J::object_t&>();
    // A handful of members are searched in place; past that, a hash index (built once).
    constexpr std::size_t kLinear = 16;
    if (m.size() < kLinear) {
      for (auto& [name, value] : m) {
        if (name == k) {
          slot_ = &value;
          return true;
        }
      }
    } else {
      if (o.index.empty()) {
        for (std::size_t i = 0; i < m.size(); ++i) o.index.emplace(m[i].first, i);
      }
      if (const auto it = o.index.find(k); it != o.index.end()) {
        slot_ = &m[it->second].second;
        return true;
      }
      o.index.emplace(k, m.size());
    }
    m.emplace_back(std::move(k), J());
    slot_ = &m.back().second;
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    open_.push_back({put(J::array()), {}});
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Open {
    J* value;
    std::unordered_map<std::string, std::size_t> index;  // member name -> position, past kLinear
  };
  /// Places `v` where the grammar says (the root, an array's end, or the member whose key came
  /// last) and returns it. A parent is not touched while a child is open, so the pointers on
  /// the stack stay valid.
  J* put(J&& v) {
    if (open_.empty()) {
      root = std::move(v);
      return &root;
    }
    J& top = *open_.back().value;
    if (top.is_array()) {
      auto& a = top.get_ref<J::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  std::vector<Open> open_;
  J* slot_ = nullptr;
};
}  // namespace

std::optional<J> parse_ordered_json(std::string_view text) {
  Builder b;
  if (!J::sax_parse(text, &b, J::input_format_t::json, true)) return std::nullopt;
  return std::move(b.root);
}

}  // namespace atlas::server
