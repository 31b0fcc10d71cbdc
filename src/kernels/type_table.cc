// The kernel type table (see type_traits.h): one entry per row of common/ggml_type.h's
// kSupportedTypes, each built by its type's file in types/ (types/<type>.cc: its decoder,
// quantizer, packer and the kernels it names per ISA). The facts every room needs (name, block size
// and bytes, recipe facts) stay in that header-only row, because common cannot see kernels; each
// entry embeds its row by reference and adds the code. The table has as many entries as
// kSupportedTypes has rows (an entry cannot be left out: its row reference has no default), built
// at first use, not registered by static initializers (the linker drops unreferenced objects of
// static libraries).
#include <array>

#include "kernels/ops.h"
#include "kernels/type_traits.h"

namespace vllm::kernels {

// One per file in types/.
TypeTraits F32Entry(), F16Entry(), Bf16Entry(), Q4_0Entry(), Q4_1Entry(), Q5_0Entry(), Q5_1Entry(),
    Q8_0Entry(), Q2_KEntry(), Q3_KEntry(), Q4_KEntry(), Q5_KEntry(), Q6_KEntry(), Iq4NlEntry(),
    Iq4XsEntry(), Mxfp4Entry(), Q4_ZEntry(), F8E4m3B32Entry();

namespace {

const std::array<TypeTraits, kNumSupportedTypes>& Table() {
  static const std::array<TypeTraits, kNumSupportedTypes> table = {
      F32Entry(),  F16Entry(),   Bf16Entry(),  Q4_0Entry(),  Q4_1Entry(), Q5_0Entry(),
      Q5_1Entry(), Q8_0Entry(),  Q2_KEntry(),  Q3_KEntry(),  Q4_KEntry(), Q5_KEntry(),
      Q6_KEntry(), Iq4NlEntry(), Iq4XsEntry(), Mxfp4Entry(), Q4_ZEntry(), F8E4m3B32Entry(),
  };
  return table;
}

}  // namespace

Isa PackedIsa(const PackedForm& form) {
  const Isa best = BestIsa();
  return form.kernels[static_cast<int>(best)].rows != nullptr ? best : Isa::kScalar;
}

const TypeTraits* FindTypeTraits(GgmlType type) {
  for (const TypeTraits& traits : Table()) {
    if (traits.layout.type == type) return &traits;
  }
  return nullptr;
}

bool HasPackedKernels(GgmlType type) {
  const TypeTraits* traits = FindTypeTraits(type);
  return traits != nullptr && traits->packed.rows_per_group > 0 &&
         PackedIsa(traits->packed) != Isa::kScalar;
}

}  // namespace vllm::kernels
