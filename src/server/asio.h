// Boost.Asio and Beast as this project includes them. Boost 1.74's asio/awaitable.hpp uses
// std::exchange without including <utility>, so <utility> must come first.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on
