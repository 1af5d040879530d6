// Recursive-descent parser for Python 3 expressions (the grammar's `expression` rule).
#include <set>

#include "suites/bfcl/py_ast.hpp"
#include "suites/bfcl/py_lexer.hpp"

namespace atlas::suites::bfcl {

namespace {

using detail::Token;
using detail::TokKind;

const std::set<std::string>& hard_keywords() {
  static const std::set<std::string> k = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
      "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
      "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
      "with", "yield"};
  return k;
}

PyNode make(PyNodeKind k) {
  PyNode n;
  n.kind = k;
  return n;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  PyNode parse_eval() {
    PyNode e = star_expressions();
    while (at(TokKind::newline)) ++p_;
    if (!at(TokKind::end)) fail("invalid syntax");
    return e;
  }

 private:
  std::vector<Token> t_;
  std::size_t p_ = 0;

  const Token& cur() const { return t_[p_]; }
  bool at(TokKind k) const { return cur().kind == k; }
  bool at_op(const char* op) const { return cur().kind == TokKind::op && cur().text == op; }
  bool at_kw(const char* kw) const { return cur().kind == TokKind::name && cur().text == kw; }
  bool accept_op(const char* op) {
    if (!at_op(op)) return false;
    ++p_;
    return true;
  }
  bool accept_kw(const char* kw) {
    if (!at_kw(kw)) return false;
    ++p_;
    return true;
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(std::string("expected '") + op + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw PySyntaxError(what + " at offset " + std::to_string(cur().offset));
  }

  // Whether the current token can start an expression (ends tuples like `a, b,`).
  bool starts_expression() const {
    const Token& k = cur();
    if (k.kind == TokKind::name) {
      return !hard_keywords().count(k.text) || k.text == "True" || k.text == "False" || k.text == "None" ||
             k.text == "not" || k.text == "lambda" || k.text == "await";
    }
    if (k.kind == TokKind::number || k.kind == TokKind::string) return true;
    if (k.kind == TokKind::op) {
      return k.text == "(" || k.text == "[" || k.text == "{" || k.text == "-" || k.text == "+" || k.text == "~" ||
             k.text == "..." || k.text == "*";
    }
    return false;
  }

  // star_expressions: a bare tuple `a, b` at the top.
  PyNode star_expressions() {
    PyNode first = star_expression();
    if (!at_op(",")) return first;
    PyNode tup = make(PyNodeKind::tuple);
    tup.kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_expression()) break;
      tup.kids.push_back(star_expression());
    }
    return tup;
  }

  PyNode star_expression() {
    if (accept_op("*")) {
      PyNode s = make(PyNodeKind::starred);
      s.kids.push_back(bitor_expr());
      return s;
    }
    return expression();
  }

  PyNode expression() {
    if (at_kw("lambda")) return lambda_expr();
    PyNode body = disjunction();
    if (accept_kw("if")) {
      PyNode test = disjunction();
      if (!accept_kw("else")) fail("expected 'else' after 'if' expression");
      PyNode orelse = expression();
      PyNode n = make(PyNodeKind::ifexp);
      n.kids.push_back(std::move(body));
      n.kids.push_back(std::move(test));
      n.kids.push_back(std::move(orelse));
      return n;
    }
    if (at_op(":=")) fail("assignment expressions are not supported");
    if (at_kw("for") || at_kw("async")) fail("comprehensions are not supported");
    return body;
  }

  PyNode lambda_expr() {
    ++p_;  // lambda
    std::string params;
    int depth = 0;
    while (!(depth == 0 && at_op(":"))) {
      if (at(TokKind::end) || at(TokKind::newline)) fail("invalid lambda");
      if (at_op("(") || at_op("[") || at_op("{")) ++depth;
      if (at_op(")") || at_op("]") || at_op("}")) --depth;
      if (!params.empty() && cur().text != "," && cur().text != "=") params += params.back() == ',' ? " " : "";
      params += cur().text;
      ++p_;
    }
    expect_op(":");
    PyNode n = make(PyNodeKind::lambda);
    n.text = params;
    n.kids.push_back(expression());
    return n;
  }

  PyNode disjunction() {
    PyNode first = conjunction();
    if (!at_kw("or")) return first;
    PyNode n = make(PyNodeKind::boolop);
    n.text = "or";
    n.kids.push_back(std::move(first));
    while (accept_kw("or")) n.kids.push_back(conjunction());
    return n;
  }

  PyNode conjunction() {
    PyNode first = inversion();
    if (!at_kw("and")) return first;
    PyNode n = make(PyNodeKind::boolop);
    n.text = "and";
    n.kids.push_back(std::move(first));
    while (accept_kw("and")) n.kids.push_back(inversion());
    return n;
  }

  PyNode inversion() {
    if (accept_kw("not")) {
      PyNode n = make(PyNodeKind::unary);
      n.text = "not";
      n.kids.push_back(inversion());
      return n;
    }
    return comparison();
  }

  bool compare_op(std::string& op) {
    static const char* simple[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (const char* s : simple) {
      if (accept_op(s)) { op = s; return true; }
    }
    if (accept_kw("in")) { op = "in"; return true; }
    if (at_kw("not") && p_ + 1 < t_.size() && t_[p_ + 1].kind == TokKind::name && t_[p_ + 1].text == "in") {
      p_ += 2;
      op = "not in";
      return true;
    }
    if (accept_kw("is")) {
      op = accept_kw("not") ? "is not" : "is";
      return true;
    }
    return false;
  }

  PyNode comparison() {
    PyNode first = bitor_expr();
    std::string op;
    if (!compare_op(op)) return first;
    PyNode n = make(PyNodeKind::compare);
    n.kids.push_back(std::move(first));
    do {
      n.ops.push_back(op);
      n.kids.push_back(bitor_expr());
    } while (compare_op(op));
    return n;
  }

  template <typename Next>
  PyNode binary(std::initializer_list<const char*> ops, Next next) {
    PyNode left = (this->*next)();
    for (;;) {
      const char* matched = nullptr;
      for (const char* op : ops) {
        if (at_op(op)) { matched = op; break; }
      }
      if (!matched) return left;
      ++p_;
      PyNode n = make(PyNodeKind::binop);
      n.text = matched;
      n.kids.push_back(std::move(left));
      n.kids.push_back((this->*next)());
      left = std::move(n);
    }
  }

  PyNode bitor_expr() { return binary({"|"}, &Parser::bitxor_expr); }
  PyNode bitxor_expr() { return binary({"^"}, &Parser::bitand_expr); }
  PyNode bitand_expr() { return binary({"&"}, &Parser::shift_expr); }
  PyNode shift_expr() { return binary({"<<", ">>"}, &Parser::sum_expr); }
  PyNode sum_expr() { return binary({"+", "-"}, &Parser::term_expr); }
  PyNode term_expr() { return binary({"*", "/", "//", "%", "@"}, &Parser::factor); }

  PyNode factor() {
    for (const char* op : {"+", "-", "~"}) {
      if (accept_op(op)) {
        PyNode n = make(PyNodeKind::unary);
        n.text = op;
        n.kids.push_back(factor());
        return n;
      }
    }
    return power();
  }

  PyNode power() {
    if (accept_kw("await")) fail("'await' outside function");
    PyNode base = primary();
    if (accept_op("**")) {
      PyNode n = make(PyNodeKind::binop);
      n.text = "**";
      n.kids.push_back(std::move(base));
      n.kids.push_back(factor());
      return n;
    }
    return base;
  }

  PyNode primary() {
    PyNode node = atom();
    for (;;) {
      if (accept_op(".")) {
        if (!at(TokKind::name) || hard_keywords().count(cur().text)) fail("invalid syntax");
        PyNode a = make(PyNodeKind::attribute);
        a.text = cur().text;
        ++p_;
        a.kids.push_back(std::move(node));
        node = std::move(a);
      } else if (accept_op("(")) {
        node = call_args(std::move(node));
      } else if (accept_op("[")) {
        PyNode sub = make(PyNodeKind::subscript);
        sub.kids.push_back(std::move(node));
        sub.kids.push_back(slices());
        expect_op("]");
        node = std::move(sub);
      } else {
        return node;
      }
    }
  }

  PyNode call_args(PyNode func) {
    PyNode call = make(PyNodeKind::call);
    call.kids.push_back(std::move(func));
    std::vector<PyNode> positional, keyword_values;
    bool seen_keyword = false, seen_double_star = false;
    while (!at_op(")")) {
      if (accept_op("**")) {
        keyword_values.push_back(expression());
        call.kw_names.push_back(std::nullopt);
        seen_double_star = true;
      } else if (accept_op("*")) {
        if (seen_double_star) fail("iterable argument unpacking follows keyword argument unpacking");
        PyNode s = make(PyNodeKind::starred);
        s.kids.push_back(expression());
        positional.push_back(std::move(s));
      } else if (at(TokKind::name) && p_ + 1 < t_.size() && t_[p_ + 1].kind == TokKind::op && t_[p_ + 1].text == "=") {
        if (hard_keywords().count(cur().text)) fail("cannot assign to keyword");
        call.kw_names.push_back(cur().text);
        p_ += 2;
        keyword_values.push_back(expression());
        seen_keyword = true;
      } else {
        PyNode arg = expression();
        if (at_op("=")) fail("expression cannot contain assignment");
        if (seen_double_star) fail("positional argument follows keyword argument unpacking");
        if (seen_keyword) fail("positional argument follows keyword argument");
        positional.push_back(std::move(arg));
      }
      if (!accept_op(",")) break;
    }
    expect_op(")");
    for (auto& a : positional) call.kids.push_back(std::move(a));
    for (auto& k : keyword_values) call.kids.push_back(std::move(k));
    return call;
  }

  PyNode slice_item() {
    PyNode lower = make(PyNodeKind::empty);
    if (!at_op(":")) {
      lower = expression();
      if (!at_op(":")) return lower;
    }
    PyNode sl = make(PyNodeKind::slice);
    expect_op(":");
    PyNode upper = make(PyNodeKind::empty), step = make(PyNodeKind::empty);
    if (!at_op(":") && !at_op("]") && !at_op(",")) upper = expression();
    if (accept_op(":")) {
      if (!at_op("]") && !at_op(",")) step = expression();
    }
    sl.kids.push_back(std::move(lower));
    sl.kids.push_back(std::move(upper));
    sl.kids.push_back(std::move(step));
    return sl;
  }

  PyNode slices() {
    PyNode first = slice_item();
    if (!at_op(",")) return first;
    PyNode tup = make(PyNodeKind::tuple);
    tup.kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op("]")) break;
      tup.kids.push_back(slice_item());
    }
    return tup;
  }

  PyNode constant(PyValue v) {
    PyNode n = make(PyNodeKind::constant);
    n.value = std::move(v);
    return n;
  }

  PyNode atom() {
    const Token& k = cur();
    switch (k.kind) {
      case TokKind::name: {
        if (k.text == "True") { ++p_; return constant(PyValue(true)); }
        if (k.text == "False") { ++p_; return constant(PyValue(false)); }
        if (k.text == "None") { ++p_; return constant(PyValue{}); }
        if (hard_keywords().count(k.text)) fail("invalid syntax");
        PyNode n = make(PyNodeKind::name);
        n.text = k.text;
        ++p_;
        return n;
      }
      case TokKind::number: {
        PyNode n = constant(k.num);
        if (k.is_imag) {
          n.special = PyConstSpecial::complex;
          n.text = k.text;
        }
        ++p_;
        return n;
      }
      case TokKind::string: return strings();
      case TokKind::op: break;
      default: fail("invalid syntax");
    }
    if (accept_op("...")) {
      PyNode n = constant(PyValue(std::string("...")));
      n.special = PyConstSpecial::ellipsis;
      return n;
    }
    if (accept_op("(")) {
      if (accept_op(")")) return make(PyNodeKind::tuple);
      PyNode inner = star_expressions_in_parens();
      expect_op(")");
      return inner;
    }
    if (accept_op("[")) {
      PyNode l = make(PyNodeKind::list);
      while (!at_op("]")) {
        l.kids.push_back(star_expression());
        if (at_kw("for") || at_kw("async")) fail("comprehensions are not supported");
        if (!accept_op(",")) break;
      }
      expect_op("]");
      return l;
    }
    if (accept_op("{")) return dict_or_set();
    fail("invalid syntax");
  }

  PyNode star_expressions_in_parens() {
    PyNode first = star_expression();
    if (at_kw("for") || at_kw("async")) fail("comprehensions are not supported");
    if (!at_op(",")) {
      if (first.kind == PyNodeKind::starred) fail("cannot use starred expression here");
      return first;
    }
    PyNode tup = make(PyNodeKind::tuple);
    tup.kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op(")")) break;
      tup.kids.push_back(star_expression());
    }
    return tup;
  }

  PyNode dict_or_set() {
    if (accept_op("}")) return make(PyNodeKind::dict);
    bool is_dict = false, decided = false;
    PyNode n = make(PyNodeKind::set);
    while (!at_op("}")) {
      if (at_op("**")) {
        if (decided && !is_dict) fail("invalid syntax");
        ++p_;
        is_dict = decided = true;
        n.kids.push_back(make(PyNodeKind::empty));
        n.kids.push_back(bitor_expr());
      } else {
        PyNode e = star_expression();
        if (accept_op(":")) {
          if ((decided && !is_dict) || e.kind == PyNodeKind::starred) fail("invalid syntax");
          is_dict = decided = true;
          n.kids.push_back(std::move(e));
          n.kids.push_back(expression());
        } else {
          if (decided && is_dict) fail("':' expected after dictionary key");
          decided = true;
          n.kids.push_back(std::move(e));
        }
      }
      if (at_kw("for") || at_kw("async")) fail("comprehensions are not supported");
      if (!accept_op(",")) break;
    }
    expect_op("}");
    if (is_dict) n.kind = PyNodeKind::dict;
    return n;
  }

  // Adjacent literals concatenate; str and bytes cannot mix; any f-string makes a JoinedStr.
  PyNode strings() {
    std::string value, source;
    bool bytes = false, fstr = false, first = true;
    while (at(TokKind::string)) {
      const Token& k = cur();
      if (!first && k.is_bytes != bytes) fail("cannot mix bytes and nonbytes literals");
      bytes = k.is_bytes;
      fstr |= k.is_fstring;
      value += k.str_value;
      if (!first) source += " ";
      source += k.text;
      first = false;
      ++p_;
    }
    PyNode n;
    if (fstr) {
      n = make(PyNodeKind::joined_str);
      n.text = source;
      return n;
    }
    n = constant(PyValue(value));
    if (bytes) {
      n.special = PyConstSpecial::bytes;
      n.text = source;
    }
    return n;
  }
};

}  // namespace

PyNode parse_python_expression(std::string_view text) {
  Parser p(detail::tokenize(text));
  return p.parse_eval();
}

}  // namespace atlas::suites::bfcl
