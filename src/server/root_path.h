// vLLM's --root-path (FastAPI's root_path), for a server behind a proxy that forwards it a path
// prefix: a request whose path starts with the root path is routed without it, any other as it
// is, as Starlette's get_route_path does.
#pragma once

#include <string>
#include <string_view>

namespace vllm::server {

// `target` (a path and perhaps a query) with `root_path` taken off the path's front when the
// path is the root path (leaving "", which no route matches) or continues it with "/".
inline std::string StripRootPath(std::string_view target, std::string_view root_path) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (root_path.empty() || !path.starts_with(root_path)) return std::string(target);
  if (path.size() > root_path.size() && path[root_path.size()] != '/') {
    return std::string(target);  // "/apiv1" is not under "/api"
  }
  return std::string(target.substr(root_path.size()));
}

}  // namespace vllm::server
