#include "core/common/bounded_json.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/common/utf8.h"

namespace ballast {
namespace {

using nlohmann::json;

// Builds the DOM as nlohmann's own SAX parser does, and stops the parse the
// moment an array or object would open past the depth limit.
class DepthLimitedSax : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  DepthLimitedSax(json& result, int max_depth)
      : json_sax_dom_parser(result, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool start_object(std::size_t size) {
    if (!Enter()) return false;
    keys_.emplace_back();
    return json_sax_dom_parser::start_object(size);
  }
  bool end_object() {
    --depth_;
    keys_.pop_back();
    return json_sax_dom_parser::end_object();
  }
  bool key(std::string& name) {
    keys_.back() = name;
    return json_sax_dom_parser::key(name);
  }
  // A number too small for a double reads as 0 (strtod's underflow), which is
  // not what its writer meant: refused, naming the key it is under. So is a
  // whole number past 64 bits (written without a point or an exponent, it
  // reaches here only because no integer holds it): as a double it would be
  // rounded, 18446744073709551616 + 1 read as 1.8446744073709552e+19.
  bool number_float(double value, const std::string& text) {
    const std::string where = keys_.empty() ? "" : fmt::format(" (in \"{}\")", keys_.back());
    if (value == 0 && text.find_first_of("123456789") < text.find_first_of("eE")) {
      error_ = fmt::format("the number {}{} is too small for a double, which would read it as 0",
                           text.substr(0, 40), where);
      return false;
    }
    if (text.find_first_of(".eE") == std::string::npos) {
      error_ = fmt::format(
          "the whole number {}{} is past 64 bits (-2^63 to 2^64 - 1), which would round it",
          text.size() > 40 ? text.substr(0, 40) + "..." : text, where);
      return false;
    }
    return json_sax_dom_parser::number_float(value, text);
  }
  bool start_array(std::size_t size) {
    if (!Enter()) return false;
    return json_sax_dom_parser::start_array(size);
  }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& error) {
    // The library's message quotes the whole token it last read, each
    // control character as 8 bytes ("<U+0009>"): cut, so that an error
    // stays short whatever the text held.
    constexpr size_t kMaxDetail = 240;
    std::string detail = error.what();
    if (detail.size() > kMaxDetail) detail = std::string(Utf8Prefix(detail, kMaxDetail)) + "...";
    error_ =
        fmt::format("not JSON at byte {} (near '{}'): {}", position, token.substr(0, 20), detail);
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  int max_depth_;
  int depth_ = 0;
  std::vector<std::string> keys_;  // the key being read in each open object
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

StatusOr<json> ParseBoundedJson(std::string_view text, std::string_view what,
                                const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Status::Invalid(fmt::format("{}: {} bytes is over the limit of {} bytes", what,
                                       text.size(), limits.max_bytes));
  }
  json result;
  DepthLimitedSax sax(result, limits.max_depth);
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const json::exception& e) {  // not expected with allow_exceptions=false
    return Status::Invalid(fmt::format("{}: not JSON: {}", what, e.what()));
  }
  if (sax.too_deep()) {
    return Status::Invalid(
        fmt::format("{}: nested deeper than {} arrays or objects", what, limits.max_depth));
  }
  if (!parsed || result.is_discarded()) {
    return Status::Invalid(
        fmt::format("{}: {}", what, sax.error().empty() ? "not JSON" : sax.error()));
  }
  return result;
}

}  // namespace ballast
