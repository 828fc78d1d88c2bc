#include "core/deck.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/parsed_toml.hpp"
#include "core/toml_literal.hpp"

namespace kstencil {

struct Deck::Values {
  toml::table table;
};

namespace {

// The largest deck file read (decks are a few KiB; a larger file is no deck).
constexpr std::uintmax_t max_deck_bytes = std::uintmax_t(64) << 20;

// ---------------------------------------------------------------------------------------------
// Formatting values as TOML literals.

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double.
std::string shortest(double x) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

// A TOML float literal that round-trips exactly; always has a '.' or an exponent (1.0, not 1).
std::string real_literal(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::string s = shortest(x);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string array_literal(const toml::array& array) {
  std::string out = "[";
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (i) out += ", ";
    out += toml_literal(*array.get(i));
  }
  return out + "]";
}

}  // namespace

std::string toml_literal(const toml::node& node) {
  if (auto v = node.as_string()) return quote(v->get());
  if (auto v = node.as_integer()) return std::to_string(v->get());
  if (auto v = node.as_floating_point()) return real_literal(v->get());
  if (auto v = node.as_boolean()) return v->get() ? "true" : "false";
  if (auto v = node.as_array()) return array_literal(*v);
  if (node.is_table()) return "{...}";
  std::ostringstream out;  // dates and times
  node.visit([&](const auto& n) { out << n; });
  return out.str();
}

namespace {

std::string truncated(std::string s) {
  constexpr std::size_t limit = 80;
  if (s.size() > limit) s = s.substr(0, limit - 3) + "...";
  return s;
}

// Text from the deck or the command line as a message shows it: control characters escaped and
// cut to a line's length (a key a megabyte long is not echoed back whole).
std::string shown(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 200)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
      out += code;
    } else {
      out += c;
    }
  }
  return truncated(out);
}

// "string \"big\"", "integer 5", "array of 2 elements [1, 2]", ...: what a deck gave.
std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "string " + truncated(toml_literal(node));
    case toml::node_type::integer:
      return "integer " + toml_literal(node);
    case toml::node_type::floating_point:
      return "float " + toml_literal(node);
    case toml::node_type::boolean:
      return "boolean " + toml_literal(node);
    case toml::node_type::array: {
      const auto n = node.as_array()->size();
      return "array of " + std::to_string(n) + (n == 1 ? " element " : " elements ") +
             truncated(toml_literal(node));
    }
    case toml::node_type::table:
      return "table";
    case toml::node_type::date:
      return "date " + toml_literal(node);
    case toml::node_type::time:
      return "time " + toml_literal(node);
    case toml::node_type::date_time:
      return "date-time " + toml_literal(node);
    default:
      return "nothing";
  }
}

std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

// ---------------------------------------------------------------------------------------------
// The schema's sections and keys.

std::vector<std::string> sections_of(const Schema& schema) {
  std::vector<std::string> sections;
  for (const auto& spec : schema)
    if (std::find(sections.begin(), sections.end(), spec.section) == sections.end())
      sections.push_back(spec.section);
  return sections;
}

std::string allowed_sections(const Schema& schema) {
  std::vector<std::string> names;
  for (const auto& s : sections_of(schema)) names.push_back("[" + s + "]");
  return "allowed sections: " + join(names);
}

bool has_section(const Schema& schema, const std::string& section) {
  return std::any_of(schema.begin(), schema.end(),
                     [&](const KeySpec& s) { return s.section == section; });
}

const KeySpec* find_spec(const Schema& schema, const std::string& section, const std::string& key) {
  for (const auto& spec : schema)
    if (spec.section == section && spec.key == key) return &spec;
  return nullptr;
}

std::string allowed_keys(const Schema& schema, const std::string& section) {
  std::vector<std::string> keys;
  for (const auto& spec : schema)
    if (spec.section == section && spec.retired.empty()) keys.push_back(spec.key);
  return "allowed keys of [" + section + "]: " + join(keys);
}

void check_schema(const Schema& schema) {
  for (std::size_t i = 0; i < schema.size(); ++i) {
    const KeySpec& spec = schema[i];
    if (spec.section.empty() || spec.key.empty())
      throw std::logic_error("kstencil deck schema: a row has an empty section or key");
    if (find_spec(schema, spec.section, spec.key) != &spec)
      throw std::logic_error("kstencil deck schema: [" + spec.section + "] " + spec.key +
                             " is declared twice");
  }
}

std::string expected(KeyType type) {
  switch (type) {
    case KeyType::integer:
      return "an integer";
    case KeyType::real:
      return "a real number";
    case KeyType::boolean:
      return "a boolean (true or false)";
    case KeyType::string:
      return "a string";
    case KeyType::integer3:
      return "an array of 3 integers";
    case KeyType::real3:
      return "an array of 3 reals";
    case KeyType::integer_or_auto:
      return "a non-negative integer or \"auto\"";
    case KeyType::boolean_or_auto:
      return "a boolean (true or false) or \"auto\"";
    case KeyType::real3_list:
      return "an array of [x, y, z] arrays of reals";
  }
  return "?";
}

// A bound as people write it: 3, 100000, 0.5.
std::string bound(double x) {
  if (x == std::trunc(x) && std::fabs(x) < 9.0e15)
    return std::to_string(static_cast<std::int64_t>(x));
  return shortest(x);
}

struct Min {
  double value;
  bool exclusive;
};

// The lower bound a key really has (an integer_or_auto key is never negative).
std::optional<Min> effective_min(const KeySpec& spec) {
  std::optional<Min> min;
  if (spec.min) min = Min{*spec.min, spec.min_exclusive};
  if (spec.type == KeyType::integer_or_auto && (!min || min->value < 0)) min = Min{0.0, false};
  return min;
}

// "integer >= 3", "real > 0", "integer >= 1 and <= 100000", "" if unbounded.
std::string range_text(const KeySpec& spec, const std::string& noun) {
  const auto min = effective_min(spec);
  std::string out;
  if (min) out += (min->exclusive ? " > " : " >= ") + bound(min->value);
  if (spec.max)
    out +=
        std::string(min ? " and" : "") + (spec.max_exclusive ? " < " : " <= ") + bound(*spec.max);
  return out.empty() ? "" : noun + out;
}

std::string int_choices_text(const KeySpec& spec) {
  std::vector<std::string> items;
  for (const auto v : spec.int_choices) items.push_back(std::to_string(v));
  return join(items);
}

// What makes a number acceptable for `spec` (type already checked).
bool in_range(const KeySpec& spec, double v) {
  const auto min = effective_min(spec);
  if (min && (min->exclusive ? !(v > min->value) : !(v >= min->value))) return false;
  if (spec.max && (spec.max_exclusive ? !(v < *spec.max) : !(v <= *spec.max))) return false;
  return true;
}

bool in_int_choices(const KeySpec& spec, std::int64_t v) {
  return spec.int_choices.empty() ||
         std::find(spec.int_choices.begin(), spec.int_choices.end(), v) != spec.int_choices.end();
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;  // bytes of the sequence c starts
    if (c < 0x80)
      n = 1;
    else if ((c & 0xe0) == 0xc0)
      n = 2;
    else if ((c & 0xf0) == 0xe0)
      n = 3;
    else if ((c & 0xf8) == 0xf0)
      n = 4;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Checking one value against its KeySpec.

// Where a value came from, for messages: "deck.toml:12" or "command-line override 'x=1'".
struct Origin {
  std::string where;
};

[[noreturn]] void fail(const Origin& origin, const std::string& text) {
  throw DeckError(origin.where + ": " + text);
}

std::string name_of(const KeySpec& spec) {
  return "[" + spec.section + "] " + spec.key;
}

[[noreturn]] void wrong_type(const Origin& origin, const KeySpec& spec, const toml::node& node,
                             const std::string& detail = "") {
  fail(origin,
       name_of(spec) + ": expected " + expected(spec.type) + ", got " + describe(node) + detail);
}

[[noreturn]] void not_allowed(const Origin& origin, const KeySpec& spec, const toml::node& node,
                              const std::string& what) {
  fail(origin, name_of(spec) + " = " + truncated(toml_literal(node)) + ": " + what +
                   "; allowed: " + allowed_values(spec));
}

// "out of range", with the key's reason for its range where it has one.
std::string out_of_range(const KeySpec& spec) {
  return spec.range_reason.empty() ? "out of range" : "out of range (" + spec.range_reason + ")";
}

// "out of range" for a value, "element 1 = -1 out of range" for an array element.
std::string problem(const std::string& element, const std::string& value, const std::string& what) {
  return element.empty() ? what : element + " = " + value + " " + what;
}

void check_integer(const Origin& origin, const KeySpec& spec, const toml::node& value,
                   std::int64_t v, const std::string& element) {
  if (!in_range(spec, static_cast<double>(v)))
    not_allowed(origin, spec, value, problem(element, std::to_string(v), out_of_range(spec)));
  if (!in_int_choices(spec, v))
    not_allowed(origin, spec, value,
                problem(element, std::to_string(v), "not one of the allowed values"));
}

void check_real(const Origin& origin, const KeySpec& spec, const toml::node& value, double v,
                const std::string& element) {
  if (!std::isfinite(v))
    not_allowed(origin, spec, value, problem(element, real_literal(v), "not finite"));
  if (!in_range(spec, v))
    not_allowed(origin, spec, value, problem(element, real_literal(v), out_of_range(spec)));
}

// Checks `node` against `spec` and stores its value as `spec.key` in `out` (reals as floats,
// integer_or_auto as an integer or the string "auto").
void check_and_store(const Origin& origin, const KeySpec& spec, const toml::node& node,
                     toml::table& out) {
  const bool takes_auto =
      spec.type == KeyType::integer_or_auto || spec.type == KeyType::boolean_or_auto;
  if (const auto* s = node.as_string(); s && takes_auto) {
    if (s->get() != "auto") wrong_type(origin, spec, node);
    out.insert_or_assign(spec.key, "auto");
    return;
  }
  switch (spec.type) {
    case KeyType::integer:
    case KeyType::integer_or_auto: {
      const auto* v = node.as_integer();
      if (!v) wrong_type(origin, spec, node);
      check_integer(origin, spec, node, v->get(), "");
      out.insert_or_assign(spec.key, v->get());
      return;
    }
    case KeyType::real: {
      double x = 0.0;
      if (const auto* i = node.as_integer()) {
        x = static_cast<double>(i->get());
      } else if (const auto* f = node.as_floating_point()) {
        x = f->get();
      } else {
        wrong_type(origin, spec, node);
      }
      check_real(origin, spec, node, x, "");
      out.insert_or_assign(spec.key, x);
      return;
    }
    case KeyType::boolean:
    case KeyType::boolean_or_auto: {
      const auto* v = node.as_boolean();
      if (!v) wrong_type(origin, spec, node);
      out.insert_or_assign(spec.key, v->get());
      return;
    }
    case KeyType::string: {
      const auto* v = node.as_string();
      if (!v) wrong_type(origin, spec, node);
      for (const auto& [word, instead] : spec.retired_choices)
        if (v->get() == word) not_allowed(origin, spec, node, instead);
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), v->get()) == spec.choices.end())
        not_allowed(origin, spec, node, "not one of the allowed values");
      // TOML text is valid UTF-8; an override's raw text may not be (and would not read back).
      if (!valid_utf8(v->get())) not_allowed(origin, spec, node, "not valid UTF-8");
      if (spec.string_check)
        if (const std::string what = spec.string_check(v->get()); !what.empty())
          not_allowed(origin, spec, node, what);
      out.insert_or_assign(spec.key, v->get());
      return;
    }
    case KeyType::integer3:
    case KeyType::real3: {
      const bool integers = spec.type == KeyType::integer3;
      const auto* array = node.as_array();
      if (!array || array->size() != 3) wrong_type(origin, spec, node);
      toml::array values;
      for (std::size_t i = 0; i < 3; ++i) {
        const toml::node& e = *array->get(i);
        const std::string element = "element " + std::to_string(i);
        if (const auto* v = e.as_integer(); v && integers) {
          check_integer(origin, spec, node, v->get(), element);
          values.push_back(v->get());
        } else if (v) {
          const double x = static_cast<double>(v->get());
          check_real(origin, spec, node, x, element);
          values.push_back(x);
        } else if (const auto* f = e.as_floating_point(); f && !integers) {
          check_real(origin, spec, node, f->get(), element);
          values.push_back(f->get());
        } else {
          wrong_type(origin, spec, node, " (" + element + " is " + describe(e) + ")");
        }
      }
      out.insert_or_assign(spec.key, std::move(values));
      return;
    }
    case KeyType::real3_list: {
      const auto* list = node.as_array();
      if (!list) wrong_type(origin, spec, node);
      toml::array points;
      for (std::size_t p = 0; p < list->size(); ++p) {
        const auto* array = list->get(p)->as_array();
        const std::string entry = "entry " + std::to_string(p);
        if (!array || array->size() != 3)
          wrong_type(origin, spec, node, " (" + entry + " is " + describe(*list->get(p)) + ")");
        toml::array values;
        for (std::size_t i = 0; i < 3; ++i) {
          const toml::node& e = *array->get(i);
          const std::string element = entry + " element " + std::to_string(i);
          if (const auto* v = e.as_integer()) {
            check_real(origin, spec, node, static_cast<double>(v->get()), element);
            values.push_back(static_cast<double>(v->get()));
          } else if (const auto* f = e.as_floating_point()) {
            check_real(origin, spec, node, f->get(), element);
            values.push_back(f->get());
          } else {
            wrong_type(origin, spec, node, " (" + element + " is " + describe(e) + ")");
          }
        }
        points.push_back(std::move(values));
      }
      out.insert_or_assign(spec.key, std::move(points));
      return;
    }
  }
  throw std::logic_error("kstencil deck: unknown key type");
}

// "deck.toml:12" (or "deck.toml" where toml++ knows no line).
Origin at(const std::string& source, const toml::node& node) {
  const auto line = node.source().begin.line;
  return {line ? source + ":" + std::to_string(line) : source};
}

// Table entries in the order they appear in the text (toml::table orders them by key).
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  for (const auto& [key, node] : table) entries.emplace_back(std::string(key.str()), &node);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& sa = a.second->source().begin;
    const auto& sb = b.second->source().begin;
    return std::make_pair(sa.line, sa.column) < std::make_pair(sb.line, sb.column);
  });
  return entries;
}

// What toml++ 3.3 must not be given, as "<what is wrong>; allowed: <allowed>" with its line and
// column; "" if nothing. On some invalid text its parser asserts or reaches
// __builtin_unreachable (undefined behaviour in release builds): a table header that starts with
// no key character ("[)", marzer/tomlplusplus#294), '}' where an array's next value belongs, a
// non-ASCII character where it looks for whitespace (#295, #190: outside strings and comments,
// after a backslash in a """ string). All of these are invalid TOML except one (a non-ASCII
// character first on a line continued by a backslash in a """ string), refused with the reason;
// so valid decks pass. Raw control characters are refused here too, with a clearer message.
std::string toml_hazard(const std::string& text, std::size_t& line, std::size_t& column) {
  enum class In {
    structure,
    comment,
    basic,
    literal,
    multi_basic,
    multi_literal
  } in = In::structure;
  const std::size_t n = text.size();
  std::size_t line_start = 0;
  std::string open;  // the arrays ('[') and inline tables ('{') a value has open
  bool line_begins = true, header = false, after_line_end_backslash = false;
  bool element_next = false;  // after an array's '[' or ',': a value or ']' comes
  // In a value (after '=', in an array) a bare word (number, date, true, ...) runs to the next
  // whitespace, ',', ']', '}' or '#', quotes included: toml++ looks at each of its characters.
  bool value = false, word = false;
  line = 1;
  auto at = [&](std::size_t k, const char* s) { return text.compare(k, std::strlen(s), s) == 0; };
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  auto found = [&](std::size_t k, const std::string& what) {
    column = 1;
    for (std::size_t j = line_start; j < k; ++j) column += (byte(j) & 0xc0) != 0x80;
    return what;
  };
  // A leading byte order mark is not part of the text (toml++ skips it too).
  for (std::size_t i = at(0, "\xEF\xBB\xBF") ? 3 : 0; i < n; ++i) {
    const unsigned char c = byte(i);
    if ((c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' && !(c == '\r' && at(i + 1, "\n"))) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      return found(i, std::string("control character ") + code +
                          " (is this a text file?); allowed: UTF-8 text with tab, newline and CR "
                          "LF as the only control characters (write others as \\uXXXX escapes in "
                          "strings)");
    }
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::structure;
      if (in == In::structure) line_begins = true, header = false;
      word = false;
      if (open.empty()) value = false;
      continue;
    }
    const std::string non_ascii =
        "a non-ASCII character outside a string or comment; allowed: ASCII keys, numbers and "
        "punctuation, other characters only in strings and comments";
    const bool ends_word =
        c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ']' || c == '}' || c == '#';
    switch (in) {
      case In::structure:
        if (word && !ends_word) {
          if (c >= 0x80)
            return found(i,
                         "a non-ASCII character in a bare value (a number, date, true, ...: a "
                         "quote right after one starts no string); allowed: ASCII there");
          break;
        }
        word = false;
        if (line_begins && open.empty() && c != ' ' && c != '\t' && c != '\r') {
          line_begins = false;
          if (c == '[') {
            std::size_t k = i + 1;
            if (at(k, "[")) ++k;
            while (at(k, " ") || at(k, "\t")) ++k;
            const unsigned char first = k < n ? byte(k) : ']';
            // A control character there is reported as one, below.
            const bool control = (first < 0x20 || first == 0x7f) && first != '\n' && first != '\r';
            if (!std::isalnum(first) && first != '_' && first != '-' && first != '"' &&
                first != '\'' && first != ']' && !control) {
              std::string seen = std::string("'") + static_cast<char>(first) + "'";
              if (first == '\n' || first == '\r') seen = "end of line";
              if (first >= 0x80) seen = "a non-ASCII character";
              return found(k, "a table header's name starts with " + seen +
                                  "; allowed: [section] or [[section]] with a bare name "
                                  "(A-Za-z0-9_-) or a quoted one");
            }
            header = true;  // its brackets open no array
            continue;
          }
        }
        if (c >= 0x80) return found(i, non_ascii);
        if (c == '}' && element_next)
          return found(i,
                       "'}' where an array's next value or ']' belongs; allowed: [v1, v2, ...], "
                       "with { ... } only around a whole inline table");
        if (c != ' ' && c != '\t' && c != '\r' && c != '#') element_next = false;
        if (c == '#') {
          in = In::comment;
        } else if (c == '"') {
          in = at(i, "\"\"\"") ? In::multi_basic : In::basic;
          if (in == In::multi_basic) i += 2;
        } else if (c == '\'') {
          in = at(i, "'''") ? In::multi_literal : In::literal;
          if (in == In::multi_literal) i += 2;
        } else if ((c == '[' || c == '{') && !header) {
          open += static_cast<char>(c);
          element_next = c == '[';
          value = c == '[';
        } else if ((c == ']' || c == '}') && !header && !open.empty()) {
          open.pop_back();
          value = open.empty() || open.back() == '[';
        } else if (c == ',') {
          element_next = !open.empty() && open.back() == '[';
          value = element_next;
        } else if (value && !ends_word) {
          word = true;
        } else if (c == '=' && !header) {
          value = true;
        }
        break;
      case In::comment:
        break;
      case In::basic:
        if (c == '\\' && i + 1 < n && text[i + 1] != '\n')
          ++i;
        else if (c == '"')
          in = In::structure;
        break;
      case In::literal:
        if (c == '\'') in = In::structure;
        break;
      case In::multi_basic:
      case In::multi_literal: {
        const bool basic = in == In::multi_basic;
        if (basic && after_line_end_backslash) {
          if (c == ' ' || c == '\t' || c == '\r') break;
          after_line_end_backslash = false;
          if (c >= 0x80)
            return found(i,
                         "a non-ASCII character first after a line-ending backslash in a \"\"\" "
                         "string (toml++ 3.3 misreads it: marzer/tomlplusplus#190); allowed: an "
                         "ASCII character first, or a \\uXXXX escape");
        }
        if (basic && c == '\\') {
          const unsigned char next = i + 1 < n ? byte(i + 1) : ' ';
          if (next >= 0x80)
            return found(i + 1,
                         "a non-ASCII character after a backslash in a \"\"\" string; allowed: "
                         "the escapes \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX, or a "
                         "backslash that ends the line");
          if (next == ' ' || next == '\t' || next == '\r' || next == '\n')
            after_line_end_backslash = true;
          else
            ++i;  // the escaped character (\" does not close the string)
        } else if (at(i, basic ? "\"\"\"" : "'''")) {
          i += 2;
          // Up to two quotes more belong to the string before its closing delimiter.
          for (int extra = 0; extra < 2 && i + 1 < n && text[i + 1] == text[i]; ++extra) ++i;
          in = In::structure;
        }
        break;
      }
    }
  }
  return "";
}

toml::table parse_toml(const std::string& text, const std::string& source_name) {
  std::size_t line = 0, column = 0;
  if (const std::string hazard = toml_hazard(text, line, column); !hazard.empty())
    throw DeckError(source_name + ":" + std::to_string(line) + ":" + std::to_string(column) +
                    ": TOML syntax error: " + hazard);
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw DeckError(source_name + ":" + std::to_string(begin.line) + ":" +
                    std::to_string(begin.column) +
                    ": TOML syntax error: " + std::string(e.description()));
  }
}

// An override's value (as "v" in the table returned): a TOML value if it parses as one, else the
// text as a string. A string key takes the text as written when it is not a TOML string
// (run.name=2024).
toml::table override_value(const std::string& text, KeyType type, const Origin& origin) {
  bool parsed = false;
  std::size_t line = 0, column = 0;
  const std::string hazard = toml_hazard("v = " + text, line, column);
  try {
    // Such text is no TOML value either (and toml++ must not see it, above).
    if (hazard.empty()) {
      toml::table t = toml::parse("v = " + text);
      parsed = true;
      if (t.size() == 1 && t.contains("v") && (type != KeyType::string || t["v"].is_string()))
        return t;
    }
  } catch (const toml::parse_error&) {
  }
  if (!parsed && opens_as_toml_value(text))
    fail(origin, "not a TOML value (" +
                     (hazard.empty() ? std::string("unclosed bracket or quote?") : hazard) +
                     "); e.g. kernel.tile=[32,4,1], run.name=\"a b\"");
  toml::table t;
  t.insert("v", text);
  return t;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

bool opens_as_toml_value(const std::string& text) {
  const std::string value = trim(text);
  return !value.empty() && std::string("[{\"'").find(value[0]) != std::string::npos;
}

std::string run_name_problem(const std::string& name) {
  // 200 bytes leave room for the files named after the run (<name>_000000.h5.tmp, ...) within
  // the 255 bytes most file systems allow for a name.
  constexpr std::size_t max_bytes = 200;
  if (name.empty()) return "empty";
  if (name.size() > max_bytes) return std::to_string(name.size()) + " bytes long";
  if (name.find_first_not_of(" \t") == std::string::npos) return "only white space";
  if (name == "." || name == "..") return "'" + name + "' is not a folder of its own";
  if (name.find('/') != std::string::npos) return "contains '/' (a run folder is one folder)";
  for (const char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      return std::string("contains control character ") + code;
    }
  if (!valid_utf8(name)) return "not valid UTF-8";
  return "";
}

std::string run_name_allowed() {
  return "a folder name of 1 to 200 bytes of UTF-8 without '/' or control characters, not \".\", "
         "\"..\" or only spaces";
}

// -----------------------------------------------------------------------------------------------

std::string key_type_name(KeyType type) {
  switch (type) {
    case KeyType::integer:
      return "integer";
    case KeyType::real:
      return "real";
    case KeyType::boolean:
      return "boolean";
    case KeyType::string:
      return "string";
    case KeyType::integer3:
      return "3 integers";
    case KeyType::real3:
      return "3 reals";
    case KeyType::integer_or_auto:
      return "integer or \"auto\"";
    case KeyType::boolean_or_auto:
      return "boolean or \"auto\"";
    case KeyType::real3_list:
      return "list of 3 reals";
  }
  return "?";
}

std::string allowed_values(const KeySpec& spec) {
  if (!spec.allowed_text.empty()) return spec.allowed_text;
  switch (spec.type) {
    case KeyType::boolean:
      return "true, false";
    case KeyType::boolean_or_auto:
      return "true, false, \"auto\"";
    case KeyType::string: {
      if (spec.choices.empty()) return "any string";
      std::vector<std::string> quoted;
      for (const auto& c : spec.choices) quoted.push_back(quote(c));
      return join(quoted);
    }
    case KeyType::integer:
    case KeyType::real:
    case KeyType::integer_or_auto: {
      // A list of allowed integers needs no range beside it unless the schema gives one.
      const bool listed = !spec.int_choices.empty() && !spec.min && !spec.max;
      std::string range =
          listed ? "" : range_text(spec, spec.type == KeyType::real ? "real" : "integer");
      std::string out = spec.int_choices.empty() || spec.type == KeyType::real
                            ? range
                            : int_choices_text(spec) + (range.empty() ? "" : " (" + range + ")");
      if (out.empty()) out = spec.type == KeyType::real ? "any real" : "any integer";
      return spec.type == KeyType::integer_or_auto ? "\"auto\" or " + out : out;
    }
    case KeyType::integer3:
    case KeyType::real3: {
      const bool integers = spec.type == KeyType::integer3;
      std::string out = integers ? "3 integers" : "3 reals";
      const std::string range = range_text(spec, "");
      if (integers && !spec.int_choices.empty()) {
        out += ", each one of " + int_choices_text(spec);
        if (!range.empty()) out += " and" + range;
      } else if (!range.empty()) {
        out += ", each" + range;
      }
      return out;
    }
    case KeyType::real3_list:
      return "[[x, y, z], ...] (may be empty)";
  }
  return "?";
}

Deck Deck::load(const std::string& path, const std::vector<std::string>& overrides,
                const Schema& schema) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw DeckError(path + ": cannot read deck: " + std::strerror(EISDIR) +
                    "; allowed: a TOML file");
  // A device or a pipe (/dev/zero) may never end, and a deck is small: regular files only, of a
  // size read at once.
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw DeckError(path + ": cannot read deck: not a regular file; allowed: a TOML file");
  if (const auto bytes = std::filesystem::file_size(path, ec); !ec && bytes > max_deck_bytes)
    throw DeckError(path + ": cannot read deck: " + std::to_string(bytes) +
                    " bytes; allowed: a TOML file of at most " + std::to_string(max_deck_bytes) +
                    " bytes (64 MiB)");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw DeckError(path + ": cannot read deck: " +
                    (error ? std::string(std::strerror(error)) : "cannot open the file") +
                    "; allowed: a readable TOML file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    const int error = errno;
    throw DeckError(path + ": cannot read deck: " +
                    (error ? std::string(std::strerror(error)) : "read failed"));
  }
  // A file with nothing in it is most likely not the deck meant (a truncated copy, a wrong
  // name): running every default instead would hide that.
  std::istringstream lines(text.str());
  bool empty = true;
  for (std::string line; empty && std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    empty = first == std::string::npos || line[first] == '#';
  }
  if (empty)
    throw DeckError(path +
                    ": the deck is empty (only blank lines or comments); allowed: a TOML deck with "
                    "at least one [section], e.g. [run] solver = \"laplacian\" (kstencil keys "
                    "lists every key)");
  return parse(text.str(), path, overrides, schema);
}

Deck Deck::parse(const std::string& toml_text, const std::string& source_name,
                 const std::vector<std::string>& overrides, const Schema& schema) {
  const toml::table file = parse_toml(toml_text, source_name);
  return parse(ParsedToml{file}, source_name, overrides, schema);
}

Deck Deck::parse(const ParsedToml& parsed, const std::string& source_name,
                 const std::vector<std::string>& overrides, const Schema& schema) {
  check_schema(schema);
  const toml::table& file = parsed.table;
  Deck deck;
  deck.values_ = std::make_shared<Values>();
  deck.source_ = source_name;
  deck.schema_ = &schema;
  for (const auto& section : sections_of(schema))
    deck.values_->table.insert(section, toml::table{});
  auto store = [&](const Origin& origin, const KeySpec& spec, const toml::node& value) {
    if (!spec.retired.empty())
      fail(origin, "[" + spec.section + "] " + spec.key + ": removed; " + spec.retired);
    check_and_store(origin, spec, value, *deck.values_->table.get_as<toml::table>(spec.section));
  };

  // The TOML text, then the overrides' names, so that a value given on the command line replaces
  // the file's without that being checked.
  struct Override {
    Origin origin;
    const KeySpec* spec;
    toml::table value;  // as "v"
  };
  std::vector<Override> parsed_overrides;
  for (const auto& text : overrides) {
    const Origin origin{"command-line override '" + shown(text) + "'"};
    const auto equals = text.find('=');
    const std::string name = trim(text.substr(0, equals));
    const auto dot = name.find('.');
    const std::string section = dot == std::string::npos ? "" : trim(name.substr(0, dot));
    const std::string key = dot == std::string::npos ? "" : trim(name.substr(dot + 1));
    if (equals == std::string::npos || section.empty() || key.empty())
      fail(origin, "expected section.key=value, e.g. grid.nx=64");
    if (!has_section(schema, section))
      fail(origin, "unknown section [" + shown(section) + "]; " + allowed_sections(schema));
    const KeySpec* spec = find_spec(schema, section, key);
    if (!spec)
      fail(origin,
           "unknown key [" + section + "] " + shown(key) + "; " + allowed_keys(schema, section));
    parsed_overrides.push_back(
        {origin, spec, override_value(trim(text.substr(equals + 1)), spec->type, origin)});
  }
  auto overridden = [&](const KeySpec* spec) {
    return std::any_of(parsed_overrides.begin(), parsed_overrides.end(),
                       [&](const Override& o) { return o.spec == spec; });
  };

  // The file: every section and key must be in the schema.
  for (const auto& [name, node] : in_file_order(file)) {
    const Origin origin = at(source_name, *node);
    const auto* section = node->as_table();
    if (!section) {
      if (const auto* array = node->as_array(); array && array->is_array_of_tables())
        fail(origin, "[[" + shown(name) + "]]: arrays of tables are not allowed; " +
                         allowed_sections(schema));
      fail(origin, shown(name) + " = " + truncated(toml_literal(*node)) +
                       ": keys belong in a section; " + allowed_sections(schema));
    }
    // kstencil sweep's table, which it reads from the file itself (sweep/spec.cpp).
    if (name == "sweep" && !has_section(schema, name)) continue;
    if (!has_section(schema, name))
      fail(origin, "unknown section [" + shown(name) + "]; " + allowed_sections(schema));
    for (const auto& [key, value] : in_file_order(*section)) {
      const Origin key_origin = at(source_name, *value);
      if (value->is_table())
        fail(key_origin, "[" + name + "." + shown(key) +
                             "]: nested tables are not allowed (sections are one level deep); " +
                             allowed_keys(schema, name));
      const KeySpec* spec = find_spec(schema, name, key);
      if (!spec)
        fail(key_origin,
             "[" + name + "] " + shown(key) + ": unknown key; " + allowed_keys(schema, name));
      if (!overridden(spec)) store(key_origin, *spec, *value);
    }
  }

  // The overrides' values, in order (a later one wins).
  for (const auto& o : parsed_overrides) store(o.origin, *o.spec, *o.value.get("v"));

  // The defaults.
  for (const auto& spec : schema) {
    if (!spec.retired.empty() || deck.values_->table[spec.section][spec.key]) continue;
    try {
      const toml::table t = toml::parse("v = " + spec.default_toml);
      store({"schema default"}, spec, *t.get("v"));
    } catch (const std::exception& e) {
      throw std::logic_error("kstencil deck schema: [" + spec.section + "] " + spec.key +
                             ": bad default '" + spec.default_toml + "': " + e.what());
    }
  }

  // Checks across keys, on the resolved values.
  for (const auto& spec : schema)
    if (spec.deck_check && spec.retired.empty()) spec.deck_check(deck);
  return deck;
}

const KeySpec& Deck::spec(const std::string& section, const std::string& key) const {
  const KeySpec* s = schema_ ? find_spec(*schema_, section, key) : nullptr;
  if (!s)
    throw std::logic_error("kstencil::Deck: no key [" + section + "] " + key + " in the schema");
  return *s;
}

template <class Node>
const Node& Deck::node(const std::string& section, const std::string& key,
                       std::initializer_list<KeyType> types, const char* accessor) const {
  const KeySpec& s = spec(section, key);
  if (std::find(types.begin(), types.end(), s.type) == types.end())
    throw std::logic_error(std::string("kstencil::Deck::") + accessor + ": [" + section + "] " +
                           key + " is of type " + key_type_name(s.type));
  const toml::node* n = values_->table[section][key].node();
  if (!n) throw std::logic_error("kstencil::Deck: [" + section + "] " + key + " has no value");
  return *n;
}

std::int64_t Deck::integer(const std::string& section, const std::string& key) const {
  const toml::node& n =
      node<toml::node>(section, key, {KeyType::integer, KeyType::integer_or_auto}, "integer");
  return n.is_string() ? 0 : n.as_integer()->get();
}

double Deck::real(const std::string& section, const std::string& key) const {
  return node<toml::node>(section, key, {KeyType::real}, "real").as_floating_point()->get();
}

bool Deck::boolean(const std::string& section, const std::string& key) const {
  const toml::node& n =
      node<toml::node>(section, key, {KeyType::boolean, KeyType::boolean_or_auto}, "boolean");
  if (n.is_string())
    throw std::logic_error("kstencil::Deck::boolean: [" + section + "] " + key + " is \"auto\"");
  return n.as_boolean()->get();
}

std::string Deck::string(const std::string& section, const std::string& key) const {
  return node<toml::node>(section, key, {KeyType::string}, "string").as_string()->get();
}

std::array<std::int64_t, 3> Deck::integer3(const std::string& section,
                                           const std::string& key) const {
  const toml::array& a =
      *node<toml::node>(section, key, {KeyType::integer3}, "integer3").as_array();
  return {a.get(0)->as_integer()->get(), a.get(1)->as_integer()->get(),
          a.get(2)->as_integer()->get()};
}

std::array<double, 3> Deck::real3(const std::string& section, const std::string& key) const {
  const toml::array& a = *node<toml::node>(section, key, {KeyType::real3}, "real3").as_array();
  return {a.get(0)->as_floating_point()->get(), a.get(1)->as_floating_point()->get(),
          a.get(2)->as_floating_point()->get()};
}

std::vector<std::array<double, 3>> Deck::real3_list(const std::string& section,
                                                    const std::string& key) const {
  const toml::array& list =
      *node<toml::node>(section, key, {KeyType::real3_list}, "real3_list").as_array();
  std::vector<std::array<double, 3>> points;
  for (const auto& entry : list) {
    const toml::array& a = *entry.as_array();
    points.push_back({a.get(0)->as_floating_point()->get(), a.get(1)->as_floating_point()->get(),
                      a.get(2)->as_floating_point()->get()});
  }
  return points;
}

bool Deck::is_auto(const std::string& section, const std::string& key) const {
  return node<toml::node>(section, key, {KeyType::integer_or_auto, KeyType::boolean_or_auto},
                          "is_auto")
      .is_string();
}

bool Deck::is_default(const std::string& section, const std::string& key) const {
  const KeySpec& key_spec = spec(section, key);
  toml::table default_value;
  check_and_store({"schema default"}, key_spec,
                  *toml::parse("v = " + key_spec.default_toml).get("v"), default_value);
  return toml_literal(*default_value.get(key)) == value_literal(section, key);
}

std::string Deck::resolved_toml() const {
  if (!schema_) return "";
  std::string out;
  for (const auto& section : sections_of(*schema_)) {
    if (!out.empty()) out += "\n";
    out += "[" + section + "]\n";
    for (const auto& spec : *schema_)
      if (spec.section == section && spec.retired.empty())
        out += spec.key + " = " + toml_literal(*values_->table[section][spec.key].node()) + "\n";
  }
  return out;
}

std::string Deck::value_literal(const std::string& section, const std::string& key) const {
  spec(section, key);
  return toml_literal(*values_->table[section][key].node());
}

DeckError Deck::error(const std::string& section, const std::string& key, const std::string& what,
                      const std::string& allowed) const {
  return DeckError(source_ + ": [" + section + "] " + key + " = " + value_literal(section, key) +
                   ": " + what + "; allowed: " + allowed);
}

std::string peek_deck_string(const std::string& path, const std::vector<std::string>& overrides,
                             const std::string& section, const std::string& key,
                             const std::string& fallback) {
  std::string value = fallback;
  try {
    // What Deck::load refuses is not read here either (it says why).
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) ||
        std::filesystem::file_size(path, ec) > max_deck_bytes || ec)
      throw std::runtime_error("not a deck");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::size_t line = 0, column = 0;
    if (in && toml_hazard(text.str(), line, column).empty()) {
      const toml::table table = toml::parse(text.str(), path);
      if (auto found = table[section][key].value<std::string>()) value = *found;
    }
  } catch (const std::exception&) {
    // Unreadable or not TOML: loading the deck reports it properly.
  }
  // Overrides are split as Deck::parse splits them (spaces around the names and the '='), or a
  // deck run with "run.solver = cg" would be checked against one solver's keys and name another.
  for (const auto& o : overrides) {
    const auto equals = o.find('=');
    const std::string name = trim(o.substr(0, equals));
    const auto dot = name.find('.');
    if (equals == std::string::npos || dot == std::string::npos ||
        trim(name.substr(0, dot)) != section || trim(name.substr(dot + 1)) != key)
      continue;
    value = trim(o.substr(equals + 1));
    // A TOML string literal, as Deck::load reads it: run.solver="cg" means cg.
    if (const auto t = override_value(value, KeyType::string,
                                      Origin{"command-line override '" + shown(o) + "'"});
        t.contains("v"))
      if (const auto word = t["v"].value<std::string>()) value = *word;
  }
  return value;
}

std::string schema_markdown(const Schema& schema) {
  auto cell = [](const std::string& text) {
    std::string out;
    for (const char c : text) {
      if (c == '|') out += '\\';
      out += c == '\n' ? ' ' : c;
    }
    return out;
  };
  auto code = [&](const std::string& text) { return "`" + cell(text) + "`"; };
  std::string out =
      "| Section | Key | Type | Default | Allowed | Meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& spec : schema)
    if (spec.retired.empty())
      out += "| " + code("[" + spec.section + "]") + " | " + code(spec.key) + " | " +
             cell(key_type_name(spec.type)) + " | " + code(trim(spec.default_toml)) + " | " +
             cell(allowed_values(spec)) + " | " + cell(spec.help) + " |\n";
  return out;
}

}  // namespace kstencil
