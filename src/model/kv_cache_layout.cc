#include "model/kv_cache_layout.h"

#include <algorithm>

namespace vllm {

bool KvCacheLayout::has_sliding_group() const {
  return std::any_of(groups.begin(), groups.end(),
                     [](const Group& group) { return group.sliding_window > 0; });
}

KvCacheLayout KvCacheLayoutFromWindows(std::span<const int64_t> layer_windows) {
  // Each attention type's layers, types in the order of their first layer.
  struct Type {
    int64_t sliding_window = 0;
    std::vector<int64_t> layers;
  };
  std::vector<Type> types;
  for (int64_t layer = 0; layer < static_cast<int64_t>(layer_windows.size()); ++layer) {
    auto type = std::find_if(types.begin(), types.end(), [&](const Type& t) {
      return t.sliding_window == layer_windows[layer];
    });
    if (type == types.end()) type = types.insert(types.end(), {layer_windows[layer], {}});
    type->layers.push_back(layer);
  }
  KvCacheLayout layout;
  if (types.empty()) return layout;
  auto by_count = [](const Type& a, const Type& b) { return a.layers.size() < b.layers.size(); };
  const auto fewest =
      static_cast<int64_t>(std::min_element(types.begin(), types.end(), by_count)->layers.size());
  const auto most =
      static_cast<int64_t>(std::max_element(types.begin(), types.end(), by_count)->layers.size());
  layout.group_size = 4 * most < 5 * fewest ? most : fewest;  // most < 1.25 * fewest
  layout.group_of_layer.resize(layer_windows.size());
  layout.place_in_group.resize(layer_windows.size());
  for (const Type& type : types) {
    for (size_t i = 0; i < type.layers.size(); ++i) {
      const int64_t place = static_cast<int64_t>(i) % layout.group_size;
      if (place == 0) layout.groups.push_back({.sliding_window = type.sliding_window});
      layout.groups.back().layers.push_back(type.layers[i]);
      layout.group_of_layer[type.layers[i]] = static_cast<int32_t>(layout.groups.size() - 1);
      layout.place_in_group[type.layers[i]] = static_cast<int32_t>(place);
    }
  }
  return layout;
}

KvCacheLayout KvCacheLayoutOf(const ModelConfig& config) {
  std::vector<int64_t> layer_windows(config.num_layers);
  for (int64_t layer = 0; layer < config.num_layers; ++layer) {
    layer_windows[layer] = config.LayerSlidingWindow(layer);
  }
  return KvCacheLayoutFromWindows(layer_windows);
}

KvCacheLayout SingleGroupKvCacheLayout(int64_t num_layers) {
  return KvCacheLayoutFromWindows(std::vector<int64_t>(num_layers, 0));
}

KvCacheLayout StageKvCacheLayout(const KvCacheLayout& whole, int64_t first_layer,
                                 int64_t end_layer) {
  KvCacheLayout stage = whole;
  stage.group_size = 1;
  std::fill(stage.place_in_group.begin(), stage.place_in_group.end(), 0);
  for (const KvCacheLayout::Group& group : whole.groups) {
    int32_t places = 0;
    for (int64_t layer : group.layers) {
      if (layer >= first_layer && layer < end_layer) stage.place_in_group[layer] = places++;
    }
    stage.group_size = std::max<int64_t>(stage.group_size, places);
  }
  return stage;
}

}  // namespace vllm
