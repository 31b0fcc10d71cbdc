// The process's malloc settings for a model's forward passes.
#pragma once

namespace vllm {

// Keeps freed activation buffers (megabytes each, allocated and freed every layer) in the heap
// for the next layer instead of handing them back to the kernel: glibc by default maps large
// blocks afresh and trims the heap top, so each forward pass page-faulted and zeroed tens of
// megabytes again (about 12,000 faults per 512-token prefill of a 1B model; 30 with this). Blocks
// of 256 MiB and more still get their own mappings, and the heap returns free memory above 1 GiB at
// its top. Applies to the whole process; the first call sets it, later calls do nothing. glibc only
// (elsewhere a no-op).
void KeepFreedBuffersForReuse();

// Hands the heap's free pages back to the kernel, wherever they lie (after a load has freed its
// conversion buffers, and when the engine has gone idle after work: pages KeepFreedBuffersForReuse
// would otherwise keep). glibc only.
void ReturnFreeHeapPages();

}  // namespace vllm
