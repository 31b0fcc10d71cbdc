// The JSON Schema string formats the grammar can enforce, each as a regular expression over the
// string's value (written from the RFCs: 3339 dates and times, 4122 uuids, 791 / 4291 / 3986 IP
// addresses and URIs, 1123 hostnames, 6901 JSON pointers, a dot-atom e-mail address).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vllm {

// The regex for `format`, or nullopt when the format is not supported. Supported: date, time,
// date-time, duration, uuid, email, ipv4, ipv6, hostname, uri, uri-reference, json-pointer,
// relative-json-pointer.
std::optional<std::string> JsonStringFormatRegex(std::string_view format);

}  // namespace vllm
