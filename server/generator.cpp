#include "server/generator.hpp"

#include "common/atomic_file.hpp"
#include "engine/backend.hpp"
#include "engine/model.hpp"
#include "server/error.hpp"

namespace atlas::server {

std::string model_chat_template(const engine::Model& model) {
  if (auto it = model.source.metadata.find("tokenizer.chat_template"); it != model.source.metadata.end()) return it->second;
  const auto& p = model.source.path;
  std::error_code ec;
  if (!p.empty() && std::filesystem::is_directory(p, ec)) {
    const auto cfg = p / "tokenizer_config.json";
    if (std::filesystem::exists(cfg, ec)) {
      auto j = nlohmann::json::parse(atlas::read_file(cfg), nullptr, false);
      if (j.is_object() && j.contains("chat_template")) {
        const auto& t = j["chat_template"];
        if (t.is_string()) return t.get<std::string>();
        if (t.is_array()) {
          for (const auto& e : t) {
            // Compared as JSON: a "name" that is not a string is no match (json::value() threw).
            if (e.is_object() && e.contains("name") && e["name"] == "default" && e.contains("template") && e["template"].is_string()) {
              return e["template"].get<std::string>();
            }
          }
        }
      }
    }
  }
  return {};
}

namespace {
class SessionGenerator final : public Generator {
 public:
  SessionGenerator(engine::Model model, const engine::BackendOptions& bo)
      : model_(std::make_unique<engine::Model>(std::move(model))) {
    if (!model_->tokenizer) {
      throw ServerError("model '" + model_->config.name + "' has no tokenizer: the server needs one to read prompts");
    }
    backend_ = engine::make_backend(*model_, bo);
    session_ = std::make_unique<engine::Session>(*backend_);
    template_ = model_chat_template(*model_);
  }

  const engine::Tokenizer& tokenizer() const override { return *model_->tokenizer; }
  int context_length() const override { return backend_->max_seq_len(); }
  engine::GenerateResult generate(const engine::GenerateRequest& req,
                                  const std::function<void(const engine::TokenEvent&)>& on_token) override {
    return session_->generate(req, on_token);
  }
  bool supports_logprobs() const override { return backend_->supports_logprobs(); }
  std::string backend_name() const override { return std::string(backend_->name()); }
  void reset() override { session_->reset(); }
  const std::vector<int>& cached_tokens() const override { return session_->cached_tokens(); }
  std::string chat_template() const override { return template_; }
  nlohmann::json describe() const override {
    // No file path: GET /v1/models is answered to any client with a key, and the path tells
    // it the layout of the host (user names, mounts).
    return {{"format", model_->source.format},
            {"name", model_->config.name},
            {"backend", std::string(backend_->name())},
            {"parameters", model_->config.parameter_count()}};
  }

 private:
  std::unique_ptr<engine::Model> model_;  // on the heap: the backend keeps pointers into it
  std::unique_ptr<engine::Backend> backend_;
  std::unique_ptr<engine::Session> session_;
  std::string template_;
};
}  // namespace

std::unique_ptr<Generator> make_session_generator(engine::Model model, const engine::BackendOptions& backend) {
  return std::make_unique<SessionGenerator>(std::move(model), backend);
}

}  // namespace atlas::server
