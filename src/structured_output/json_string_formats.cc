// JSON Schema string formats as regular expressions.
#include "structured_output/json_string_formats.h"

namespace vllm {
namespace {

// RFC 3339 full-date and full-time.
const std::string kDate = R"([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))";
const std::string kTime =
    R"(([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))";

// RFC 3339 appendix A: P then a date part (days, months or years, each optionally followed by
// the smaller units) with an optional time part, or a time part alone, or weeks.
const std::string kDurationTime = R"(T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S))";
const std::string kDurationDate = R"(([0-9]+D|[0-9]+M([0-9]+D)?|[0-9]+Y([0-9]+M([0-9]+D)?)?))";

const std::string kIpv4Octet = R"((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))";
const std::string kIpv4 = "(" + kIpv4Octet + R"(\.){3})" + kIpv4Octet;

// RFC 3986's IPv6address: eight 16-bit pieces, "::" standing for a run of zero pieces, the last
// two pieces possibly written as an IPv4 address.
std::string Ipv6() {
  const std::string piece = "[0-9A-Fa-f]{1,4}";
  const std::string last_two = "(" + piece + ":" + piece + "|" + kIpv4 + ")";
  auto pieces_before = [&](int max_count) {  // up to max_count + 1 pieces, then "::"
    return "((" + piece + ":){0," + std::to_string(max_count) + "}" + piece + ")?::";
  };
  return "((" + piece + ":){6}" + last_two +                          //
         "|::(" + piece + ":){5}" + last_two +                        //
         "|(" + piece + ")?::(" + piece + ":){4}" + last_two +        //
         "|" + pieces_before(1) + "(" + piece + ":){3}" + last_two +  //
         "|" + pieces_before(2) + "(" + piece + ":){2}" + last_two +  //
         "|" + pieces_before(3) + piece + ":" + last_two +            //
         "|" + pieces_before(4) + last_two +                          //
         "|" + pieces_before(5) + piece +                             //
         "|" + pieces_before(6) + ")";
}

// RFC 1123 labels of at most 63 letters, digits and inner hyphens, joined by dots.
const std::string kHostname =
    R"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)";

// A dot-atom local part (RFC 5322 atext) at a hostname.
const std::string kEmailAtom = R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)";
const std::string kEmail = kEmailAtom + R"((\.)" + kEmailAtom + ")*@" + kHostname;

// RFC 3986: the characters a URI may hold (unreserved, reserved, percent-encoded).
const std::string kUriText = R"(([A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*)";
const std::string kUri = R"([A-Za-z][A-Za-z0-9+.-]*:)" + kUriText;

// RFC 6901 and its relative form.
const std::string kJsonPointer = R"((/([^/~]|~[01])*)*)";
const std::string kRelativeJsonPointer = "(0|[1-9][0-9]*)(#|" + kJsonPointer + ")";

}  // namespace

std::optional<std::string> JsonStringFormatRegex(std::string_view format) {
  if (format == "date") return kDate;
  if (format == "time") return kTime;
  if (format == "date-time") return kDate + "[Tt]" + kTime;
  if (format == "duration") {
    return "P(" + kDurationDate + "(" + kDurationTime + ")?|" + kDurationTime + "|[0-9]+W)";
  }
  if (format == "uuid") {
    return "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";
  }
  if (format == "ipv4") return kIpv4;
  if (format == "ipv6") return Ipv6();
  if (format == "hostname") return kHostname;
  if (format == "email") return kEmail;
  if (format == "uri") return kUri;
  if (format == "uri-reference") return kUriText;
  if (format == "json-pointer") return kJsonPointer;
  if (format == "relative-json-pointer") return kRelativeJsonPointer;
  return std::nullopt;
}

}  // namespace vllm
