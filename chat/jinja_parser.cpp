#include "chat/jinja_parser.hpp"

#include <algorithm>
#include <string>

#include "chat/jinja_lexer.hpp"
#include "chat/jinja_segments.hpp"

namespace atlas::chat::jinja {

namespace {

/// The deepest expression tree and statement nesting a template may have. The evaluator and the
/// destructors recurse once per level and the parser once per bracket, so a template of
/// thousands of '(' or `1+1+...+1` overflowed the stack (found by fuzz_jinja). 256 is the
/// tool-call bound too; real chat templates nest fewer than 10 levels.
constexpr int kMaxDepth = 256;

/// Counts one level of parser recursion for as long as it lives.
class DepthGuard {
 public:
  DepthGuard(int& depth, int line, const char* what) : depth_(depth) {
    if (++depth_ > kMaxDepth) fail(line, std::string(what) + " nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

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
    DepthGuard g(depth_, line_, "expression");
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
      return sealed(std::move(c));
    }
    return e;
  }

 private:
  /// Sets e's depth from its (already sealed) operands; fails past kMaxDepth. Every node that
  /// gets operands passes here, so loops that build chains (`a+b+c`, `x|f|g`, `a.b.c`) are
  /// bounded as well as recursion.
  ExprP sealed(ExprP e) {
    int below = 0;
    for (const ExprP* k : {&e->a, &e->b, &e->c})
      if (*k) below = std::max(below, (*k)->depth);
    for (const ExprP& k : e->args)
      if (k) below = std::max(below, k->depth);
    for (const auto& kv : e->kwargs)
      if (kv.second) below = std::max(below, kv.second->depth);
    e->depth = below + 1;
    if (e->depth > kMaxDepth) fail(line_, "expression nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return e;
  }
  ExprP binary(const std::string& op, ExprP l, ExprP r) {
    auto e = make(Expr::binary, line_);
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return sealed(std::move(e));
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
      DepthGuard g(depth_, line_, "expression");
      ++p_;
      auto e = make(Expr::not_, line_);
      e->a = parse_not();
      return sealed(std::move(e));
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
        e = sealed(std::move(t));
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
      DepthGuard g(depth_, line_, "expression");
      ++p_;
      auto e = make(Expr::neg, line_);
      e->a = parse_unary();
      return sealed(std::move(e));
    }
    if (is_op("+")) {
      DepthGuard g(depth_, line_, "expression");
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
        e = sealed(std::move(a));
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
        e = sealed(std::move(x));
      } else if (is_op("(")) {
        auto c = make(Expr::call, line_);
        c->a = std::move(e);
        parse_args(*c);
        e = sealed(std::move(c));
      } else if (is_op("|")) {
        ++p_;
        auto f = make(Expr::filter, line_);
        f->name = expect_name();
        f->a = std::move(e);
        if (is_op("(")) parse_args(*f);
        e = sealed(std::move(f));
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
            e = sealed(std::move(l));
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
          return sealed(std::move(l));
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
          return sealed(std::move(d));
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
  int depth_ = 0;  ///< parser recursion (DepthGuard)
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
    // if/for bodies recurse here and in the evaluator: bounded like expressions.
    DepthGuard g(depth_, i_ < s_.size() ? s_[i_].line : 0, "statement blocks");
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
          n.line = seg.line;
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
  int depth_ = 0;  ///< block nesting (DepthGuard)
};


}  // namespace

std::vector<Node> parse_template(std::string source) {
  if (source.ends_with("\r\n")) source.resize(source.size() - 2);
  else if (source.ends_with('\n')) source.pop_back();
  return StmtParser(split_template(source)).parse_all();
}

}  // namespace atlas::chat::jinja
