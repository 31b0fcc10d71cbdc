// A strict reader of ZIP archives whose entries are STORED (no compression), as torch.save
// writes them: the end-of-central-directory record, then each central-directory entry and its
// local header. Every offset and size is checked against the buffer and each entry's CRC-32 is
// verified; compressed entries, ZIP64, encryption and multi-disk archives are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/expected.h"

namespace vllm {

struct ZipEntry {
  std::string name;
  std::span<const uint8_t> data;  // inside the archive's buffer
};

// The entries of `archive` in central-directory order; the spans point into `archive`.
Expected<std::vector<ZipEntry>> ReadStoredZip(std::span<const uint8_t> archive);

struct ZipFileEntry {
  std::string name;
  std::vector<uint8_t> data;
};

// An archive of `entries`, STORED, each one's data starting on a 64-byte boundary (the local
// header's extra field padded with an "FB" record, as torch.save's writer aligns them).
std::vector<uint8_t> WriteStoredZip(const std::vector<ZipFileEntry>& entries);

// The CRC-32 (IEEE, as ZIP and zlib compute it) of `bytes`.
uint32_t Crc32(std::span<const uint8_t> bytes);

}  // namespace vllm
