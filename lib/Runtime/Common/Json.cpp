//===- Json.cpp - the little JSON the checkpoint manifest needs -----------===//
//
// A strict RFC 8259 reader (objects keep their order; integers are exact
// int64) and the string quoting of the writer. Errors name the byte offset.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace zeroc::rt::ckpt {

const Json *Json::get(const std::string &key) const {
  for (const auto &[name, value] : object)
    if (name == key)
      return &value;
  return nullptr;
}

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  std::string document(Json &value) {
    space();
    if (std::string error = parse(value, 0); !error.empty())
      return error;
    space();
    if (at != text.size())
      return fail("unexpected characters after the document");
    return "";
  }

private:
  const std::string &text;
  size_t at = 0;

  std::string fail(const std::string &what) const {
    return "invalid JSON at byte " + std::to_string(at) + ": " + what;
  }

  void space() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n' ||
                                text[at] == '\t' || text[at] == '\r'))
      ++at;
  }

  bool word(const char *literal) {
    size_t length = std::strlen(literal);
    if (text.compare(at, length, literal) != 0)
      return false;
    at += length;
    return true;
  }

  std::string parse(Json &value, int depth) {
    if (depth > 32)
      return fail("nested too deep");
    if (at >= text.size())
      return fail("unexpected end");
    char c = text[at];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Json::String;
      return parseString(value.string);
    }
    if (word("true")) {
      value.kind = Json::Bool;
      value.boolean = true;
      return "";
    }
    if (word("false")) {
      value.kind = Json::Bool;
      return "";
    }
    if (word("null")) {
      value.kind = Json::Null;
      return "";
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(value);
    return fail(std::string("unexpected '") + c + "'");
  }

  std::string parseObject(Json &value, int depth) {
    value.kind = Json::Object;
    ++at;
    space();
    if (at < text.size() && text[at] == '}') {
      ++at;
      return "";
    }
    while (true) {
      space();
      if (at >= text.size() || text[at] != '"')
        return fail("expected a key");
      std::string key;
      if (std::string error = parseString(key); !error.empty())
        return error;
      if (value.get(key))
        return fail("key '" + key + "' appears twice");
      space();
      if (at >= text.size() || text[at] != ':')
        return fail("expected ':'");
      ++at;
      space();
      Json member;
      if (std::string error = parse(member, depth + 1); !error.empty())
        return error;
      value.object.emplace_back(std::move(key), std::move(member));
      space();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      if (at < text.size() && text[at] == '}') {
        ++at;
        return "";
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string parseArray(Json &value, int depth) {
    value.kind = Json::Array;
    ++at;
    space();
    if (at < text.size() && text[at] == ']') {
      ++at;
      return "";
    }
    while (true) {
      space();
      Json element;
      if (std::string error = parse(element, depth + 1); !error.empty())
        return error;
      value.array.push_back(std::move(element));
      space();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      if (at < text.size() && text[at] == ']') {
        ++at;
        return "";
      }
      return fail("expected ',' or ']'");
    }
  }

  std::string parseString(std::string &out) {
    ++at; // the quote
    while (true) {
      if (at >= text.size())
        return fail("unterminated string");
      char c = text[at++];
      if (c == '"')
        return "";
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at >= text.size())
        return fail("unterminated escape");
      char e = text[at++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        if (at + 4 > text.size())
          return fail("truncated \\u escape");
        uint32_t code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text[at++];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= static_cast<uint32_t>(h - '0');
          else if (h >= 'a' && h <= 'f')
            code |= static_cast<uint32_t>(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F')
            code |= static_cast<uint32_t>(h - 'A' + 10);
          else
            return fail("bad \\u escape");
        }
        // Names are ASCII in practice; other code points become UTF-8
        // (surrogate pairs are not combined).
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        return fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  std::string parseNumber(Json &value) {
    size_t start = at;
    if (text[at] == '-')
      ++at;
    bool integer = true;
    while (at < text.size()) {
      char c = text[at];
      if (c >= '0' && c <= '9') {
        ++at;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integer = false;
        ++at;
      } else {
        break;
      }
    }
    std::string spelling = text.substr(start, at - start);
    char *end = nullptr;
    errno = 0;
    value.kind = Json::Number;
    value.number = std::strtod(spelling.c_str(), &end);
    if (spelling.empty() || spelling == "-" || *end != '\0')
      return fail("bad number '" + spelling + "'");
    if (integer && spelling[0] != '-') {
      errno = 0;
      unsigned long long parsed = std::strtoull(spelling.c_str(), &end, 10);
      if (errno == ERANGE)
        return fail("integer out of range '" + spelling + "'");
      value.isUnsigned = true;
      value.unsignedInteger = parsed;
      value.isInteger = parsed <= static_cast<unsigned long long>(INT64_MAX);
      value.integer = static_cast<int64_t>(parsed);
    } else if (integer) {
      errno = 0;
      long long parsed = std::strtoll(spelling.c_str(), &end, 10);
      if (errno == ERANGE)
        return fail("integer out of range '" + spelling + "'");
      value.isInteger = true;
      value.integer = parsed;
    }
    return "";
  }
};

} // namespace

std::string parseJson(const std::string &text, Json &value) {
  value = Json();
  return Parser(text).document(value);
}

std::string jsonQuote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", u);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

} // namespace zeroc::rt::ckpt
