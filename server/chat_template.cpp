#include "server/chat_template.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "server/error.hpp"

namespace atlas::server {

namespace {

using V = TemplateValue;

V undefined() { return V(V::value_t::discarded); }
bool is_undef(const V& v) { return v.is_discarded(); }

// ---------------------------------------------------------------------------------------------
// Template text -> segments (text, {{ expr }}, {% stmt %}), with whitespace control applied.

struct Segment {
  enum Kind { text, expr, stmt, comment } kind = text;
  std::string body;
  int line = 1;
  bool strip_left = false;   // {%- {{- {#-
  bool strip_right = false;  // -%} -}} -#}
  bool keep_left = false;    // {%+ (disables lstrip_blocks)
};

[[noreturn]] void fail(int line, const std::string& what) {
  throw ServerError("chat template line " + std::to_string(line) + ": " + what);
}

int count_lines(const std::string& s, std::size_t from, std::size_t to) {
  return static_cast<int>(std::count(s.begin() + static_cast<long>(from), s.begin() + static_cast<long>(to), '\n'));
}

std::vector<Segment> split_template(const std::string& src) {
  std::vector<Segment> segs;
  std::size_t pos = 0;
  int line = 1;
  while (pos < src.size()) {
    std::size_t open = src.find('{', pos);
    while (open != std::string::npos && open + 1 < src.size() && src[open + 1] != '{' && src[open + 1] != '%' &&
           src[open + 1] != '#') {
      open = src.find('{', open + 1);
    }
    if (open == std::string::npos || open + 1 >= src.size()) {
      segs.push_back({Segment::text, src.substr(pos), line});
      break;
    }
    if (open > pos) segs.push_back({Segment::text, src.substr(pos, open - pos), line});
    line += count_lines(src, pos, open);
    const char k = src[open + 1];
    Segment seg;
    seg.line = line;
    seg.kind = k == '{' ? Segment::expr : k == '%' ? Segment::stmt : Segment::comment;
    const std::string close = k == '{' ? "}}" : k == '%' ? "%}" : "#}";
    std::size_t body_start = open + 2;
    if (body_start < src.size() && src[body_start] == '-') {
      seg.strip_left = true;
      ++body_start;
    } else if (body_start < src.size() && src[body_start] == '+') {
      seg.keep_left = true;
      ++body_start;
    }
    // Find the closing delimiter outside string literals (comments have no strings).
    std::size_t i = body_start;
    char quote = 0;
    std::size_t end = std::string::npos;
    for (; i + 1 < src.size(); ++i) {
      const char c = src[i];
      if (seg.kind != Segment::comment) {
        if (quote) {
          if (c == '\\') {
            ++i;
            continue;
          }
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') {
          quote = c;
          continue;
        }
      }
      if (src.compare(i, 2, close) == 0) {
        end = i;
        break;
      }
    }
    if (end == std::string::npos) fail(line, "unclosed '" + src.substr(open, 2) + "'");
    std::size_t body_end = end;
    if (body_end > body_start && src[body_end - 1] == '-') {
      seg.strip_right = true;
      --body_end;
    }
    seg.body = src.substr(body_start, body_end - body_start);
    line += count_lines(src, open, end + 2);
    segs.push_back(std::move(seg));
    pos = end + 2;
  }
  // Whitespace control: explicit '-' strips all whitespace; for block tags transformers'
  // trim_blocks drops the first newline after the tag and lstrip_blocks drops spaces/tabs
  // between the line start and the tag.
  auto is_ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  // Left sides first: lstrip_blocks looks for the line start in the source text, before
  // trim_blocks of the previous tag has removed that line's newline.
  for (std::size_t s = 1; s < segs.size(); ++s) {
    const Segment& tag = segs[s];
    if (tag.kind == Segment::text || segs[s - 1].kind != Segment::text) continue;
    std::string& prev = segs[s - 1].body;
    if (tag.strip_left) {
      while (!prev.empty() && is_ws(prev.back())) prev.pop_back();
    } else if (tag.kind != Segment::expr && !tag.keep_left) {
      const std::size_t nl = prev.find_last_of('\n');
      const std::size_t from = nl == std::string::npos ? 0 : nl + 1;
      const bool at_line_start = nl != std::string::npos || s == 1;
      if (at_line_start && prev.find_first_not_of(" \t", from) == std::string::npos) prev.resize(from);
    }
  }
  for (std::size_t s = 0; s + 1 < segs.size(); ++s) {
    const Segment& tag = segs[s];
    if (tag.kind == Segment::text || segs[s + 1].kind != Segment::text) continue;
    std::string& next = segs[s + 1].body;
    if (tag.strip_right) {
      std::size_t k = 0;
      while (k < next.size() && is_ws(next[k])) ++k;
      next.erase(0, k);
    } else if (tag.kind != Segment::expr) {
      if (next.rfind("\r\n", 0) == 0) next.erase(0, 2);
      else if (next.rfind("\n", 0) == 0) next.erase(0, 1);
    }
  }
  return segs;
}

// ---------------------------------------------------------------------------------------------
// Expression tokens

struct Tok {
  enum Kind { name, str, integer, real, op, end } kind = end;
  std::string text;
  long long ival = 0;
  double fval = 0;
};

std::vector<Tok> lex_expr(const std::string& s, int line) {
  std::vector<Tok> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Tok::name, s.substr(i, j - i)});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      bool real = false;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        real = true;
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      std::string num = s.substr(i, j - i);
      num.erase(std::remove(num.begin(), num.end(), '_'), num.end());
      Tok t;
      t.kind = real ? Tok::real : Tok::integer;
      t.text = num;
      if (real) t.fval = std::stod(num);
      else t.ival = std::stoll(num);
      out.push_back(t);
      i = j;
      continue;
    }
    if (c == '\'' || c == '"') {
      std::string v;
      std::size_t j = i + 1;
      bool closed = false;
      for (; j < s.size(); ++j) {
        if (s[j] == '\\' && j + 1 < s.size()) {
          const char e = s[++j];
          switch (e) {
            case 'n': v += '\n'; break;
            case 't': v += '\t'; break;
            case 'r': v += '\r'; break;
            case '\\': v += '\\'; break;
            case '\'': v += '\''; break;
            case '"': v += '"'; break;
            default: v += '\\'; v += e;
          }
          continue;
        }
        if (s[j] == c) {
          closed = true;
          break;
        }
        v += s[j];
      }
      if (!closed) fail(line, "unterminated string literal");
      out.push_back({Tok::str, v});
      i = j + 1;
      continue;
    }
    static const char* two[] = {"==", "!=", "<=", ">=", "//", "**"};
    bool matched = false;
    for (const char* t : two) {
      if (s.compare(i, 2, t) == 0) {
        out.push_back({Tok::op, t});
        i += 2;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::string("()[]{},.:|~+-*/%<>=").find(c) != std::string::npos) {
      out.push_back({Tok::op, std::string(1, c)});
      ++i;
      continue;
    }
    fail(line, std::string("unexpected character '") + c + "'");
  }
  out.push_back({Tok::end, ""});
  return out;
}

// ---------------------------------------------------------------------------------------------
// AST

struct Expr;
using ExprP = std::unique_ptr<Expr>;
struct Expr {
  enum Kind { literal, var, attr, index, slice, call, filter, test, neg, not_, binary, cond, list, dict } kind;
  int line = 0;
  V value;                 // literal
  std::string name;        // var, attr, call(method/function), filter, test, binary op
  ExprP a, b, c;           // operands (slice: a[b:c], step in args[0])
  std::vector<ExprP> args;
  std::vector<std::pair<std::string, ExprP>> kwargs;
  bool negated = false;    // `is not`
};

ExprP make(Expr::Kind k, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->line = line;
  return e;
}

class ExprParser {
 public:
  ExprParser(std::vector<Tok> toks, int line) : t_(std::move(toks)), line_(line) {}

  ExprP parse_expression() { return parse_cond(); }
  /// An expression without a trailing `if`: the iterable of `for x in xs if cond`.
  ExprP parse_cond_no_if() { return parse_or(); }
  bool at_end() const { return t_[p_].kind == Tok::end; }
  const Tok& peek(std::size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  bool is_op(const char* o, std::size_t k = 0) const { return peek(k).kind == Tok::op && peek(k).text == o; }
  bool is_name(const char* n, std::size_t k = 0) const { return peek(k).kind == Tok::name && peek(k).text == n; }
  Tok next() { return t_[p_ < t_.size() - 1 ? p_++ : p_]; }
  void expect_op(const char* o) {
    if (!is_op(o)) fail(line_, std::string("expected '") + o + "', found '" + peek().text + "'");
    ++p_;
  }
  std::string expect_name() {
    if (peek().kind != Tok::name) fail(line_, "expected a name, found '" + peek().text + "'");
    return next().text;
  }
  void expect_end() {
    if (!at_end()) fail(line_, "unexpected '" + peek().text + "'");
  }

  ExprP parse_cond() {
    ExprP e = parse_or();
    if (is_name("if")) {
      ++p_;
      auto c = make(Expr::cond, line_);
      c->b = parse_or();  // condition
      c->a = std::move(e);
      if (is_name("else")) {
        ++p_;
        c->c = parse_cond();
      }
      return c;
    }
    return e;
  }

 private:
  ExprP binary(const std::string& op, ExprP l, ExprP r) {
    auto e = make(Expr::binary, line_);
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
  }
  ExprP parse_or() {
    ExprP e = parse_and();
    while (is_name("or")) {
      ++p_;
      e = binary("or", std::move(e), parse_and());
    }
    return e;
  }
  ExprP parse_and() {
    ExprP e = parse_not();
    while (is_name("and")) {
      ++p_;
      e = binary("and", std::move(e), parse_not());
    }
    return e;
  }
  ExprP parse_not() {
    if (is_name("not")) {
      ++p_;
      auto e = make(Expr::not_, line_);
      e->a = parse_not();
      return e;
    }
    return parse_compare();
  }
  ExprP parse_compare() {
    ExprP e = parse_concat();
    while (true) {
      if (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">=")) {
        std::string op = next().text;
        e = binary(op, std::move(e), parse_concat());
      } else if (is_name("in")) {
        ++p_;
        e = binary("in", std::move(e), parse_concat());
      } else if (is_name("not") && is_name("in", 1)) {
        p_ += 2;
        e = binary("not in", std::move(e), parse_concat());
      } else if (is_name("is")) {
        ++p_;
        auto t = make(Expr::test, line_);
        if (is_name("not")) {
          ++p_;
          t->negated = true;
        }
        t->name = expect_name();
        t->a = std::move(e);
        if (is_op("(")) {
          ++p_;
          if (!is_op(")")) t->args.push_back(parse_expression());
          expect_op(")");
        } else if (!at_end() && (peek().kind == Tok::str || peek().kind == Tok::integer)) {
          t->args.push_back(parse_primary());  // `is sameas x`, `is equalto 'a'`
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }
  ExprP parse_concat() {
    ExprP e = parse_add();
    while (is_op("~")) {
      ++p_;
      e = binary("~", std::move(e), parse_add());
    }
    return e;
  }
  ExprP parse_add() {
    ExprP e = parse_mul();
    while (is_op("+") || is_op("-")) {
      std::string op = next().text;
      e = binary(op, std::move(e), parse_mul());
    }
    return e;
  }
  ExprP parse_mul() {
    ExprP e = parse_unary();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = next().text;
      e = binary(op, std::move(e), parse_unary());
    }
    return e;
  }
  ExprP parse_unary() {
    if (is_op("-")) {
      ++p_;
      auto e = make(Expr::neg, line_);
      e->a = parse_unary();
      return e;
    }
    if (is_op("+")) {
      ++p_;
      return parse_unary();
    }
    return parse_postfix(parse_primary());
  }
  void parse_args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().kind == Tok::name && is_op("=", 1)) {
        std::string k = next().text;
        ++p_;
        e.kwargs.emplace_back(k, parse_expression());
      } else {
        e.args.push_back(parse_expression());
      }
      if (!is_op(",")) break;
      ++p_;
    }
    expect_op(")");
  }
  ExprP parse_postfix(ExprP e) {
    while (true) {
      if (is_op(".")) {
        ++p_;
        auto a = make(Expr::attr, line_);
        a->name = expect_name();
        a->a = std::move(e);
        e = std::move(a);
      } else if (is_op("[")) {
        ++p_;
        ExprP lo, hi, step;
        bool is_slice = false;
        if (!is_op(":")) lo = parse_expression();
        if (is_op(":")) {
          is_slice = true;
          ++p_;
          if (!is_op("]") && !is_op(":")) hi = parse_expression();
          if (is_op(":")) {
            ++p_;
            if (!is_op("]")) step = parse_expression();
          }
        }
        expect_op("]");
        auto x = make(is_slice ? Expr::slice : Expr::index, line_);
        x->a = std::move(e);
        x->b = std::move(lo);
        x->c = std::move(hi);
        if (step) x->args.push_back(std::move(step));
        e = std::move(x);
      } else if (is_op("(")) {
        auto c = make(Expr::call, line_);
        c->a = std::move(e);
        parse_args(*c);
        e = std::move(c);
      } else if (is_op("|")) {
        ++p_;
        auto f = make(Expr::filter, line_);
        f->name = expect_name();
        f->a = std::move(e);
        if (is_op("(")) parse_args(*f);
        e = std::move(f);
      } else {
        return e;
      }
    }
  }
  ExprP parse_primary() {
    const Tok t = next();
    switch (t.kind) {
      case Tok::str: {
        auto e = make(Expr::literal, line_);
        e->value = t.text;
        while (peek().kind == Tok::str) e->value = e->value.get<std::string>() + next().text;  // 'a' 'b'
        return e;
      }
      case Tok::integer: {
        auto e = make(Expr::literal, line_);
        e->value = t.ival;
        return e;
      }
      case Tok::real: {
        auto e = make(Expr::literal, line_);
        e->value = t.fval;
        return e;
      }
      case Tok::name: {
        auto e = make(Expr::literal, line_);
        if (t.text == "true" || t.text == "True") e->value = true;
        else if (t.text == "false" || t.text == "False") e->value = false;
        else if (t.text == "none" || t.text == "None") e->value = nullptr;
        else {
          e->kind = Expr::var;
          e->name = t.text;
        }
        return e;
      }
      case Tok::op:
        if (t.text == "(") {
          ExprP e = parse_expression();
          if (is_op(",")) {  // tuple -> list
            auto l = make(Expr::list, line_);
            l->args.push_back(std::move(e));
            while (is_op(",")) {
              ++p_;
              if (is_op(")")) break;
              l->args.push_back(parse_expression());
            }
            e = std::move(l);
          }
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          auto l = make(Expr::list, line_);
          while (!is_op("]")) {
            l->args.push_back(parse_expression());
            if (!is_op(",")) break;
            ++p_;
          }
          expect_op("]");
          return l;
        }
        if (t.text == "{") {
          auto d = make(Expr::dict, line_);
          while (!is_op("}")) {
            d->args.push_back(parse_expression());
            expect_op(":");
            d->args.push_back(parse_expression());
            if (!is_op(",")) break;
            ++p_;
          }
          expect_op("}");
          return d;
        }
        break;
      case Tok::end:
        fail(line_, "unexpected end of expression");
    }
    fail(line_, "unexpected '" + t.text + "'");
  }

  std::vector<Tok> t_;
  std::size_t p_ = 0;
  int line_;
};

// ---------------------------------------------------------------------------------------------
// Statements

struct Node {
  enum Kind { text, output, if_, for_, set } kind = text;
  int line = 0;
  std::string raw;
  ExprP expr;                                                 // output, set value, for iterable
  std::vector<std::pair<ExprP, std::vector<Node>>> branches;  // if / elif
  std::vector<Node> else_body;                                // if, for
  std::vector<std::string> targets;                           // for targets; set: name [, attr]
  ExprP loop_filter;                                          // for ... if cond
  std::vector<Node> body;                                     // for
};

class StmtParser {
 public:
  explicit StmtParser(std::vector<Segment> segs) : s_(std::move(segs)) {}

  std::vector<Node> parse_all() {
    std::string end;
    auto nodes = parse_block({}, end);
    return nodes;
  }

 private:
  static std::string keyword(const Segment& seg) {
    std::size_t i = seg.body.find_first_not_of(" \t\r\n");
    if (i == std::string::npos) return "";
    std::size_t j = i;
    while (j < seg.body.size() && (std::isalnum(static_cast<unsigned char>(seg.body[j])) || seg.body[j] == '_')) ++j;
    return seg.body.substr(i, j - i);
  }
  static std::string rest(const Segment& seg, const std::string& kw) {
    std::size_t i = seg.body.find(kw);
    return seg.body.substr(i + kw.size());
  }

  // Parses nodes until a statement whose keyword is in `stops`; returns it in `end_kw`.
  std::vector<Node> parse_block(const std::vector<std::string>& stops, std::string& end_kw) {
    std::vector<Node> nodes;
    while (i_ < s_.size()) {
      Segment& seg = s_[i_];
      if (seg.kind == Segment::comment) {
        ++i_;
        continue;
      }
      if (seg.kind == Segment::text) {
        if (!seg.body.empty()) {
          Node n;
          n.kind = Node::text;
          n.raw = seg.body;
          nodes.push_back(std::move(n));
        }
        ++i_;
        continue;
      }
      if (seg.kind == Segment::expr) {
        ExprParser p(lex_expr(seg.body, seg.line), seg.line);
        Node n;
        n.kind = Node::output;
        n.line = seg.line;
        n.expr = p.parse_expression();
        p.expect_end();
        nodes.push_back(std::move(n));
        ++i_;
        continue;
      }
      const std::string kw = keyword(seg);
      if (std::find(stops.begin(), stops.end(), kw) != stops.end()) {
        end_kw = kw;
        return nodes;
      }
      const int line = seg.line;
      if (kw == "if") {
        ++i_;
        Node n;
        n.kind = Node::if_;
        n.line = line;
        ExprParser p(lex_expr(rest(seg, "if"), line), line);
        ExprP cond = p.parse_expression();
        p.expect_end();
        while (true) {
          std::string e;
          auto body = parse_block({"elif", "else", "endif"}, e);
          n.branches.emplace_back(std::move(cond), std::move(body));
          if (e.empty()) fail(line, "'if' without 'endif'");
          Segment& at = s_[i_];
          ++i_;
          if (e == "endif") break;
          if (e == "else") {
            std::string e2;
            n.else_body = parse_block({"endif"}, e2);
            if (e2.empty()) fail(line, "'if' without 'endif'");
            ++i_;
            break;
          }
          ExprParser pe(lex_expr(rest(at, "elif"), at.line), at.line);
          cond = pe.parse_expression();
          pe.expect_end();
        }
        nodes.push_back(std::move(n));
      } else if (kw == "for") {
        ++i_;
        Node n;
        n.kind = Node::for_;
        n.line = line;
        ExprParser p(lex_expr(rest(seg, "for"), line), line);
        n.targets.push_back(p.expect_name());
        while (p.is_op(",")) {
          p.next();
          n.targets.push_back(p.expect_name());
        }
        if (!p.is_name("in")) fail(line, "expected 'in' in for loop");
        p.next();
        n.expr = p.parse_cond_no_if();
        if (p.is_name("if")) {
          p.next();
          n.loop_filter = p.parse_expression();
        }
        if (p.is_name("recursive")) fail(line, "recursive loops are not supported");
        p.expect_end();
        std::string e;
        n.body = parse_block({"else", "endfor"}, e);
        if (e.empty()) fail(line, "'for' without 'endfor'");
        ++i_;
        if (e == "else") {
          std::string e2;
          n.else_body = parse_block({"endfor"}, e2);
          if (e2.empty()) fail(line, "'for' without 'endfor'");
          ++i_;
        }
        nodes.push_back(std::move(n));
      } else if (kw == "set") {
        ++i_;
        Node n;
        n.kind = Node::set;
        n.line = line;
        ExprParser p(lex_expr(rest(seg, "set"), line), line);
        n.targets.push_back(p.expect_name());
        if (p.is_op(".")) {
          p.next();
          n.targets.push_back(p.expect_name());
        }
        if (!p.is_op("=")) fail(line, "block 'set' (without '=') is not supported");
        p.next();
        n.expr = p.parse_expression();
        p.expect_end();
        nodes.push_back(std::move(n));
      } else if (kw == "generation" || kw == "endgeneration") {
        ++i_;  // transformers' assistant-mask markers: no output of their own
      } else {
        fail(line, "unsupported statement '{% " + kw + " %}'");
      }
    }
    end_kw.clear();
    return nodes;
  }

  std::vector<Segment> s_;
  std::size_t i_ = 0;
};


// ---------------------------------------------------------------------------------------------
// Values

bool truthy(const V& v) {
  if (is_undef(v) || v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<long long>() != 0;
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return !v.empty();
}

void dump_python_json(const V& v, int indent, int depth, std::string& out) {
  if (v.is_object() || v.is_array()) {
    const bool obj = v.is_object();
    out += obj ? '{' : '[';
    if (v.empty()) {
      out += obj ? '}' : ']';
      return;
    }
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += indent >= 0 ? "," : ", ";
      first = false;
      if (indent >= 0) out += "\n" + std::string(static_cast<std::size_t>(indent * (depth + 1)), ' ');
      if (obj) {
        out += V(it.key()).dump(-1, ' ', false, V::error_handler_t::replace);
        out += ": ";
      }
      dump_python_json(*it, indent, depth + 1, out);
    }
    if (indent >= 0) out += "\n" + std::string(static_cast<std::size_t>(indent * depth), ' ');
    out += obj ? '}' : ']';
    return;
  }
  if (is_undef(v)) {
    out += "null";
    return;
  }
  out += v.dump(-1, ' ', false, V::error_handler_t::replace);
}

std::string python_repr(const V& v);

std::string to_text(const V& v) {
  if (is_undef(v)) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::string s = v.dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }
  return python_repr(v);
}

std::string python_repr(const V& v) {
  if (v.is_string()) {
    std::string s = "'";
    for (char c : v.get_ref<const std::string&>()) {
      if (c == '\'' || c == '\\') s += '\\';
      if (c == '\n') {
        s += "\\n";
        continue;
      }
      s += c;
    }
    return s + "'";
  }
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + python_repr(v[i]);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      s += (first ? "" : ", ") + python_repr(V(it.key())) + ": " + python_repr(*it);
      first = false;
    }
    return s + "}";
  }
  return to_text(v);
}

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string strip_chars(const std::string& s, const std::string& chars, bool left, bool right) {
  std::size_t b = 0, e = s.size();
  if (left) while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (right) while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  return s.substr(b, e - b);
}

const std::string kWs = " \t\n\r\f\v";

// ---------------------------------------------------------------------------------------------
// Evaluation

struct RaiseException {
  std::string message;
};

class Evaluator {
 public:
  explicit Evaluator(const V& ctx) { scopes_.push_back(ctx.is_object() ? ctx : V::object()); }

  void run(const std::vector<Node>& nodes, std::string& out) {
    for (const Node& n : nodes) exec(n, out);
  }

 private:
  [[noreturn]] static void type_error(int line, const std::string& what) { fail(line, what); }

  V lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return *f;
    }
    return undefined();
  }
  V* lookup_ref(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &*f;
    }
    return nullptr;
  }

  void exec(const Node& n, std::string& out) {
    switch (n.kind) {
      case Node::text:
        out += n.raw;
        return;
      case Node::output:
        out += to_text(eval(*n.expr));
        return;
      case Node::if_:
        for (const auto& [cond, body] : n.branches) {
          if (truthy(eval(*cond))) {
            run(body, out);
            return;
          }
        }
        run(n.else_body, out);
        return;
      case Node::set: {
        V v = eval(*n.expr);
        if (n.targets.size() == 2) {
          V* ns = lookup_ref(n.targets[0]);
          if (!ns || !ns->is_object()) type_error(n.line, "cannot set attribute of '" + n.targets[0] + "' (not a namespace)");
          (*ns)[n.targets[1]] = std::move(v);
        } else {
          scopes_.back()[n.targets[0]] = std::move(v);
        }
        return;
      }
      case Node::for_:
        exec_for(n, out);
        return;
    }
  }

  void exec_for(const Node& n, std::string& out) {
    V seq = eval(*n.expr);
    std::vector<V> items;
    if (seq.is_array()) {
      for (const auto& x : seq) items.push_back(x);
    } else if (seq.is_object()) {
      for (auto it = seq.begin(); it != seq.end(); ++it) items.push_back(it.key());
    } else if (seq.is_string()) {
      // iterate code points
      const std::string& s = seq.get_ref<const std::string&>();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        items.push_back(s.substr(i, j - i));
        i = j;
      }
    } else if (!is_undef(seq) && !seq.is_null()) {
      type_error(n.line, "for loop over a value that is not iterable: " + python_repr(seq));
    }
    auto bind = [&](V& scope, const V& item) {
      if (n.targets.size() == 1) {
        scope[n.targets[0]] = item;
      } else {
        if (!item.is_array() || item.size() != n.targets.size()) {
          type_error(n.line, "cannot unpack " + python_repr(item) + " into " + std::to_string(n.targets.size()) + " names");
        }
        for (std::size_t k = 0; k < n.targets.size(); ++k) scope[n.targets[k]] = item[k];
      }
    };
    if (n.loop_filter) {
      std::vector<V> kept;
      for (const auto& item : items) {
        scopes_.push_back(V::object());
        bind(scopes_.back(), item);
        const bool keep = truthy(eval(*n.loop_filter));
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      run(n.else_body, out);
      return;
    }
    const long long len = static_cast<long long>(items.size());
    for (long long i = 0; i < len; ++i) {
      scopes_.push_back(V::object());
      V& scope = scopes_.back();
      bind(scope, items[static_cast<std::size_t>(i)]);
      V loop = V::object();
      loop["index"] = i + 1;
      loop["index0"] = i;
      loop["revindex"] = len - i;
      loop["revindex0"] = len - i - 1;
      loop["first"] = i == 0;
      loop["last"] = i == len - 1;
      loop["length"] = len;
      loop["previtem"] = i > 0 ? items[static_cast<std::size_t>(i - 1)] : undefined();
      loop["nextitem"] = i + 1 < len ? items[static_cast<std::size_t>(i + 1)] : undefined();
      scope["loop"] = std::move(loop);
      run(n.body, out);
      scopes_.pop_back();
    }
  }

  static long long as_int(const V& v, int line) {
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    if (v.is_number()) return static_cast<long long>(v.get<double>());
    type_error(line, "expected an integer, got " + python_repr(v));
  }

  V subscript(const V& obj, const V& key, int line) {
    if (obj.is_object()) {
      if (!key.is_string()) return undefined();
      auto it = obj.find(key.get<std::string>());
      return it == obj.end() ? undefined() : *it;
    }
    if (obj.is_array() || obj.is_string()) {
      if (!key.is_number_integer()) return undefined();
      long long i = key.get<long long>();
      const long long n = obj.is_array() ? static_cast<long long>(obj.size()) : static_cast<long long>(obj.get_ref<const std::string&>().size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return undefined();
      if (obj.is_array()) return obj[static_cast<std::size_t>(i)];
      return std::string(1, obj.get_ref<const std::string&>()[static_cast<std::size_t>(i)]);
    }
    (void)line;
    return undefined();
  }

  V slice(const V& obj, const Expr& e) {
    const bool str = obj.is_string();
    if (!str && !obj.is_array()) return undefined();
    const long long n = str ? static_cast<long long>(obj.get_ref<const std::string&>().size()) : static_cast<long long>(obj.size());
    const long long step = e.args.empty() ? 1 : as_int(eval(*e.args[0]), e.line);
    if (step == 0) type_error(e.line, "slice step cannot be zero");
    auto norm = [&](const ExprP& x, long long dflt) {
      if (!x) return dflt;
      V v = eval(*x);
      if (v.is_null()) return dflt;
      long long i = as_int(v, e.line);
      if (i < 0) i += n;
      return step > 0 ? std::clamp(i, 0LL, n) : std::clamp(i, -1LL, n - 1);
    };
    const long long lo = norm(e.b, step > 0 ? 0 : n - 1);
    const long long hi = norm(e.c, step > 0 ? n : -1);
    V out = str ? V(std::string()) : V::array();
    for (long long i = lo; step > 0 ? i < hi : i > hi; i += step) {
      if (str) out.get_ref<std::string&>() += obj.get_ref<const std::string&>()[static_cast<std::size_t>(i)];
      else out.push_back(obj[static_cast<std::size_t>(i)]);
    }
    return out;
  }

  V binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      V l = eval(*e.a);
      return truthy(l) ? eval(*e.b) : l;
    }
    if (op == "or") {
      V l = eval(*e.a);
      return truthy(l) ? l : eval(*e.b);
    }
    V l = eval(*e.a), r = eval(*e.b);
    if (op == "~") return to_text(l) + to_text(r);
    if (op == "==") return l == r && is_undef(l) == is_undef(r);
    if (op == "!=") return !(l == r && is_undef(l) == is_undef(r));
    if (op == "in" || op == "not in") {
      bool found = false;
      if (r.is_string() && l.is_string()) found = r.get<std::string>().find(l.get<std::string>()) != std::string::npos;
      else if (r.is_array()) found = std::find(r.begin(), r.end(), l) != r.end();
      else if (r.is_object() && l.is_string()) found = r.contains(l.get<std::string>());
      else if (!is_undef(r) && !r.is_null()) type_error(e.line, "'in' needs a string, list or mapping on the right, got " + python_repr(r));
      return op == "in" ? found : !found;
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      if (!((l.is_number() && r.is_number()) || (l.is_string() && r.is_string()))) {
        type_error(e.line, "cannot compare " + python_repr(l) + " " + op + " " + python_repr(r));
      }
      if (op == "<") return l < r;
      if (op == ">") return r < l;
      if (op == "<=") return !(r < l);
      return !(l < r);
    }
    if (op == "+") {
      if (l.is_string() && r.is_string()) return l.get<std::string>() + r.get<std::string>();
      if (l.is_array() && r.is_array()) {
        V out = l;
        for (const auto& x : r) out.push_back(x);
        return out;
      }
    }
    if (!l.is_number() || !r.is_number()) {
      type_error(e.line, "operator '" + op + "' needs numbers, got " + python_repr(l) + " and " + python_repr(r));
    }
    const bool ints = l.is_number_integer() && r.is_number_integer();
    if (op == "+") return ints ? V(l.get<long long>() + r.get<long long>()) : V(l.get<double>() + r.get<double>());
    if (op == "-") return ints ? V(l.get<long long>() - r.get<long long>()) : V(l.get<double>() - r.get<double>());
    if (op == "*") return ints ? V(l.get<long long>() * r.get<long long>()) : V(l.get<double>() * r.get<double>());
    if ((op == "/" || op == "//" || op == "%") && r.get<double>() == 0.0) type_error(e.line, "division by zero");
    if (op == "/") return l.get<double>() / r.get<double>();
    if (op == "//") return ints ? V(static_cast<long long>(std::floor(l.get<double>() / r.get<double>())))
                                : V(std::floor(l.get<double>() / r.get<double>()));
    if (op == "%") {
      if (ints) {
        long long m = l.get<long long>() % r.get<long long>();
        if (m != 0 && ((m < 0) != (r.get<long long>() < 0))) m += r.get<long long>();
        return m;
      }
      return std::fmod(l.get<double>(), r.get<double>());
    }
    type_error(e.line, "unknown operator '" + op + "'");
  }

  bool test(const Expr& e) {
    const V v = eval(*e.a);
    const std::string& t = e.name;
    bool r;
    if (t == "defined") r = !is_undef(v);
    else if (t == "undefined") r = is_undef(v);
    else if (t == "none") r = v.is_null();
    else if (t == "string") r = v.is_string();
    else if (t == "number") r = v.is_number();
    else if (t == "integer") r = v.is_number_integer();
    else if (t == "float") r = v.is_number_float();
    else if (t == "boolean") r = v.is_boolean();
    else if (t == "mapping") r = v.is_object();
    else if (t == "sequence" || t == "iterable") r = v.is_array() || v.is_string() || (t == "iterable" && v.is_object());
    else if (t == "true") r = v.is_boolean() && v.get<bool>();
    else if (t == "false") r = v.is_boolean() && !v.get<bool>();
    else if (t == "equalto" || t == "eq" || t == "sameas") {
      if (e.args.empty()) type_error(e.line, "test '" + t + "' needs an argument");
      r = v == eval(*e.args[0]);
    } else type_error(e.line, "unsupported test 'is " + t + "'");
    return e.negated ? !r : r;
  }

  V kwarg(const Expr& e, const std::string& name, std::size_t pos, V dflt) {
    for (const auto& [k, x] : e.kwargs) {
      if (k == name) return eval(*x);
    }
    return pos < e.args.size() ? eval(*e.args[pos]) : dflt;
  }

  V filter(const Expr& e) {
    V v = eval(*e.a);
    const std::string& f = e.name;
    if (f == "safe") return v;
    if (f == "trim") return strip_chars(to_text(v), kWs, true, true);
    if (f == "tojson") {
      V ind = kwarg(e, "indent", 0, nullptr);
      std::string out;
      dump_python_json(v, ind.is_number_integer() ? static_cast<int>(ind.get<long long>()) : -1, 0, out);
      return out;
    }
    if (f == "length" || f == "count") {
      if (v.is_string()) return static_cast<long long>(utf8_length(v.get<std::string>()));
      if (v.is_array() || v.is_object()) return static_cast<long long>(v.size());
      if (is_undef(v) || v.is_null()) return 0;
      type_error(e.line, "length of a value without one: " + python_repr(v));
    }
    if (f == "string") return to_text(v);
    if (f == "lower" || f == "upper") {
      std::string s = to_text(v);
      for (auto& c : s) c = static_cast<char>(f == "lower" ? std::tolower(static_cast<unsigned char>(c)) : std::toupper(static_cast<unsigned char>(c)));
      return s;
    }
    if (f == "capitalize" || f == "title") {
      std::string s = to_text(v);
      bool start = true;
      for (auto& c : s) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (f == "capitalize") {
          c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
          start = false;
        } else {
          c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
          start = !std::isalnum(u);
        }
      }
      return s;
    }
    if (f == "first" || f == "last") {
      if (v.is_array()) return v.empty() ? undefined() : (f == "first" ? v.front() : v.back());
      if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        return s.empty() ? undefined() : V(std::string(1, f == "first" ? s.front() : s.back()));
      }
      return undefined();
    }
    if (f == "join") {
      const std::string sep = to_text(kwarg(e, "d", 0, ""));
      std::string out;
      if (v.is_array()) {
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + to_text(v[i]);
      }
      return out;
    }
    if (f == "default" || f == "d") {
      const bool boolean = truthy(kwarg(e, "boolean", 1, false));
      if (is_undef(v) || (boolean && !truthy(v))) return kwarg(e, "default_value", 0, "");
      return v;
    }
    if (f == "items") {
      V out = V::array();
      if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it) out.push_back(V::array({it.key(), *it}));
      }
      return out;
    }
    if (f == "list") {
      if (v.is_array()) return v;
      V out = V::array();
      if (v.is_object()) for (auto it = v.begin(); it != v.end(); ++it) out.push_back(it.key());
      if (v.is_string()) for (char c : v.get<std::string>()) out.push_back(std::string(1, c));
      return out;
    }
    if (f == "reverse") {
      if (v.is_string()) {
        std::string s = v.get<std::string>();
        std::reverse(s.begin(), s.end());
        return s;
      }
      if (v.is_array()) {
        V out = V::array();
        for (auto it = v.rbegin(); it != v.rend(); ++it) out.push_back(*it);
        return out;
      }
      return v;
    }
    if (f == "int") {
      if (v.is_number()) return static_cast<long long>(v.get<double>());
      if (v.is_string()) {
        try {
          return std::stoll(v.get<std::string>());
        } catch (const std::exception&) {
          return 0;
        }
      }
      return 0;
    }
    if (f == "float") {
      if (v.is_number()) return v.get<double>();
      if (v.is_string()) {
        try {
          return std::stod(v.get<std::string>());
        } catch (const std::exception&) {
          return 0.0;
        }
      }
      return 0.0;
    }
    if (f == "replace") {
      std::string s = to_text(v);
      const std::string from = to_text(kwarg(e, "old", 0, "")), to = to_text(kwarg(e, "new", 1, ""));
      return replace_all(s, from, to);
    }
    type_error(e.line, "unsupported filter '|" + f + "'");
  }

  static std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    if (from.empty()) return s;
    std::string out;
    std::size_t pos = 0;
    for (std::size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
      out += s.substr(pos, hit - pos) + to;
    }
    return out + s.substr(pos);
  }

  V call(const Expr& e) {
    if (e.a->kind == Expr::attr) {
      const V obj = eval(*e.a->a);
      const std::string& m = e.a->name;
      if (obj.is_string()) {
        const std::string& s = obj.get_ref<const std::string&>();
        if (m == "strip" || m == "lstrip" || m == "rstrip") {
          V chars = kwarg(e, "chars", 0, nullptr);
          const std::string set = chars.is_string() ? chars.get<std::string>() : kWs;
          return strip_chars(s, set, m != "rstrip", m != "lstrip");
        }
        if (m == "startswith" || m == "endswith") {
          V arg = kwarg(e, "prefix", 0, "");
          std::vector<std::string> cands;
          if (arg.is_array()) for (const auto& x : arg) cands.push_back(to_text(x));
          else cands.push_back(to_text(arg));
          for (const auto& c : cands) {
            if (m == "startswith" ? s.rfind(c, 0) == 0 : (s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0)) return true;
          }
          return false;
        }
        if (m == "upper" || m == "lower" || m == "title" || m == "capitalize") {
          Expr f;
          f.kind = Expr::filter;
          f.line = e.line;
          f.name = m;
          f.a = make(Expr::literal, e.line);
          f.a->value = s;
          return filter(f);
        }
        if (m == "replace") return replace_all(s, to_text(kwarg(e, "old", 0, "")), to_text(kwarg(e, "new", 1, "")));
        if (m == "split") {
          V sep = kwarg(e, "sep", 0, nullptr);
          const long long maxsplit = as_int(kwarg(e, "maxsplit", 1, -1), e.line);
          V out = V::array();
          if (!sep.is_string()) {
            std::istringstream in(s);
            std::string w;
            while (in >> w) out.push_back(w);
            return out;
          }
          const std::string d = sep.get<std::string>();
          if (d.empty()) type_error(e.line, "split() with an empty separator");
          std::size_t pos = 0;
          long long splits = 0;
          for (std::size_t hit; (maxsplit < 0 || splits < maxsplit) && (hit = s.find(d, pos)) != std::string::npos; ++splits) {
            out.push_back(s.substr(pos, hit - pos));
            pos = hit + d.size();
          }
          out.push_back(s.substr(pos));
          return out;
        }
        type_error(e.line, "unsupported string method '" + m + "()'");
      }
      if (obj.is_object()) {
        if (m == "items") {
          V out = V::array();
          for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(V::array({it.key(), *it}));
          return out;
        }
        if (m == "keys") {
          V out = V::array();
          for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(it.key());
          return out;
        }
        if (m == "values") {
          V out = V::array();
          for (const auto& x : obj) out.push_back(x);
          return out;
        }
        if (m == "get") {
          V k = kwarg(e, "key", 0, nullptr);
          V r = k.is_string() && obj.contains(k.get<std::string>()) ? obj[k.get<std::string>()] : undefined();
          return is_undef(r) ? kwarg(e, "default", 1, nullptr) : r;
        }
      }
      type_error(e.line, "unsupported method '" + m + "()' on " + python_repr(obj).substr(0, 60));
    }
    if (e.a->kind == Expr::var) {
      const std::string& fn = e.a->name;
      if (fn == "raise_exception") throw RaiseException{to_text(kwarg(e, "message", 0, "raise_exception called"))};
      if (fn == "namespace") {
        V ns = V::object();
        for (const auto& [k, x] : e.kwargs) ns[k] = eval(*x);
        return ns;
      }
      if (fn == "range") {
        long long lo = 0, hi = 0, step = 1;
        if (e.args.size() == 1) hi = as_int(eval(*e.args[0]), e.line);
        else if (e.args.size() >= 2) {
          lo = as_int(eval(*e.args[0]), e.line);
          hi = as_int(eval(*e.args[1]), e.line);
          if (e.args.size() == 3) step = as_int(eval(*e.args[2]), e.line);
        }
        if (step == 0) type_error(e.line, "range() step cannot be zero");
        V out = V::array();
        for (long long i = lo; step > 0 ? i < hi : i > hi; i += step) {
          out.push_back(i);
          if (out.size() > 1'000'000) type_error(e.line, "range() too long");
        }
        return out;
      }
      if (fn == "strftime_now") return "";
      type_error(e.line, "unsupported function '" + fn + "()'");
    }
    type_error(e.line, "unsupported call expression");
  }

  V eval(const Expr& e) {
    switch (e.kind) {
      case Expr::literal: return e.value;
      case Expr::var: return lookup(e.name);
      case Expr::attr: {
        V obj = eval(*e.a);
        if (obj.is_object()) {
          auto it = obj.find(e.name);
          return it == obj.end() ? undefined() : *it;
        }
        return undefined();
      }
      case Expr::index: return subscript(eval(*e.a), eval(*e.b), e.line);
      case Expr::slice: return slice(eval(*e.a), e);
      case Expr::call: return call(e);
      case Expr::filter: return filter(e);
      case Expr::test: return test(e);
      case Expr::neg: {
        V v = eval(*e.a);
        if (v.is_number_integer()) return -v.get<long long>();
        if (v.is_number()) return -v.get<double>();
        type_error(e.line, "unary '-' on " + python_repr(v));
      }
      case Expr::not_: return !truthy(eval(*e.a));
      case Expr::binary: return binary(e);
      case Expr::cond: return truthy(eval(*e.b)) ? eval(*e.a) : (e.c ? eval(*e.c) : V(""));
      case Expr::list: {
        V out = V::array();
        for (const auto& x : e.args) out.push_back(eval(*x));
        return out;
      }
      case Expr::dict: {
        V out = V::object();
        for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) out[to_text(eval(*e.args[i]))] = eval(*e.args[i + 1]);
        return out;
      }
    }
    return undefined();
  }

  std::vector<V> scopes_;
};

}  // namespace

struct ChatTemplate::Impl {
  std::vector<Node> nodes;
};

ChatTemplate::ChatTemplate(std::string source) : source_(std::move(source)), impl_(std::make_unique<Impl>()) {
  // jinja2's default keep_trailing_newline=False: one trailing newline of the source is dropped.
  std::string src = source_;
  if (src.ends_with("\r\n")) src.resize(src.size() - 2);
  else if (src.ends_with('\n')) src.pop_back();
  impl_->nodes = StmtParser(split_template(src)).parse_all();
}
ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const TemplateValue& context) const {
  std::string out;
  Evaluator ev(context);
  try {
    ev.run(impl_->nodes, out);
  } catch (const RaiseException& e) {
    throw ServerError("chat template raised an exception: " + e.message);
  }
  return out;
}

std::string python_json_dumps(const TemplateValue& v, int indent) {
  std::string out;
  dump_python_json(v, indent, 0, out);
  return out;
}

const std::string& fallback_chat_template() {
  // Turn separators are {{ '\n\n' }} expressions: a literal newline before a {%- tag would be
  // stripped by the whitespace control.
  static const std::string t =
      "{%- if tools %}"
      "System: You can call these tools. To call one, answer with "
      "<tool_call>{\"name\": <tool name>, \"arguments\": <arguments object>}</tool_call>."
      "{%- for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{%- endfor %}{{ '\\n\\n' }}"
      "{%- endif %}"
      "{%- for message in messages %}"
      "{%- if message.role == 'system' %}System: {{ message.content | trim }}"
      "{%- elif message.role == 'user' %}User: {{ message.content | trim }}"
      "{%- elif message.role == 'assistant' %}Assistant:"
      "{%- if message.content %} {{ message.content | trim }}{% endif %}"
      "{%- if message.tool_calls %}{%- for call in message.tool_calls %}"
      " <tool_call>{\"name\": {{ call.function.name | tojson }}, \"arguments\": "
      "{%- if call.function.arguments is string %} {{ call.function.arguments }}"
      "{%- else %} {{ call.function.arguments | tojson }}{% endif %}}</tool_call>"
      "{%- endfor %}{%- endif %}"
      "{%- elif message.role == 'tool' %}Tool: {{ message.content | trim }}"
      "{%- else %}{{ raise_exception('unknown message role: ' ~ message.role) }}"
      "{%- endif %}{{ '\\n\\n' }}"
      "{%- endfor %}"
      "{%- if add_generation_prompt %}Assistant:{% endif %}";
  return t;
}

}  // namespace atlas::server
