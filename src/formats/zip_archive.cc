#include "formats/zip_archive.h"

#include <array>
#include <set>
#include <string_view>

#include "formats/little_endian.h"

namespace vllm {
namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kCentralDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndRecordSize = 22;
constexpr size_t kCentralEntrySize = 46;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kMaxCommentSize = 0xffff;
constexpr uint16_t kEncryptedFlag = 0x1;
constexpr size_t kDataAlignment = 64;

uint16_t U16(std::span<const uint8_t> bytes, size_t at) {
  return static_cast<uint16_t>(bytes[at] | bytes[at + 1] << 8);
}
uint32_t U32(std::span<const uint8_t> bytes, size_t at) {
  return static_cast<uint32_t>(U16(bytes, at)) | static_cast<uint32_t>(U16(bytes, at + 2)) << 16;
}

// Whether [offset, offset + size) lies inside a buffer of `total` bytes (no overflow).
bool Inside(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

Error Bad(const std::string& what) { return Error{"invalid ZIP archive: " + what}; }

}  // namespace

uint32_t Crc32(std::span<const uint8_t> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (uint8_t byte : bytes) crc = table[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

Expected<std::vector<ZipEntry>> ReadStoredZip(std::span<const uint8_t> archive) {
  const uint64_t total = archive.size();
  if (total < kEndRecordSize) return Bad("too short for an end-of-central-directory record");
  // The end record sits in the last 22 + (at most 65535 comment) bytes; search backwards for the
  // one whose comment reaches exactly the end of the buffer.
  size_t end_at = SIZE_MAX;
  const size_t lowest =
      total - kEndRecordSize > kMaxCommentSize ? total - kEndRecordSize - kMaxCommentSize : 0;
  for (size_t at = total - kEndRecordSize + 1; at-- > lowest;) {
    if (U32(archive, at) == kEndOfCentralDirectory &&
        at + kEndRecordSize + U16(archive, at + 20) == total) {
      end_at = at;
      break;
    }
  }
  if (end_at == SIZE_MAX) return Bad("no end-of-central-directory record");
  if (U16(archive, end_at + 4) != 0 || U16(archive, end_at + 6) != 0) {
    return Bad("multi-disk archives are not supported");
  }
  const uint16_t num_entries = U16(archive, end_at + 10);
  if (U16(archive, end_at + 8) != num_entries) return Bad("entry counts disagree");
  const uint32_t directory_size = U32(archive, end_at + 12);
  const uint32_t directory_offset = U32(archive, end_at + 16);
  if (num_entries == 0xffff || directory_size == 0xffffffffu || directory_offset == 0xffffffffu) {
    return Bad("ZIP64 archives are not supported");
  }
  if (!Inside(directory_offset, directory_size, end_at)) {
    return Bad("the central directory lies outside the archive");
  }

  std::vector<ZipEntry> entries;
  std::set<std::string> names;
  size_t at = directory_offset;
  const size_t directory_end = size_t{directory_offset} + directory_size;
  for (uint16_t i = 0; i < num_entries; ++i) {
    if (!Inside(at, kCentralEntrySize, directory_end) ||
        U32(archive, at) != kCentralDirectoryEntry) {
      return Bad("central-directory entry " + std::to_string(i) + " is malformed");
    }
    const uint16_t flags = U16(archive, at + 8);
    const uint16_t method = U16(archive, at + 10);
    const uint32_t crc = U32(archive, at + 16);
    const uint32_t compressed_size = U32(archive, at + 20);
    const uint32_t size = U32(archive, at + 24);
    const size_t name_size = U16(archive, at + 28);
    const size_t extra_size = U16(archive, at + 30);
    const size_t comment_size = U16(archive, at + 32);
    const uint32_t local_offset = U32(archive, at + 42);
    const size_t entry_size = kCentralEntrySize + name_size + extra_size + comment_size;
    if (!Inside(at, entry_size, directory_end)) {
      return Bad("central-directory entry " + std::to_string(i) + " overruns the directory");
    }
    std::string name(reinterpret_cast<const char*>(archive.data()) + at + kCentralEntrySize,
                     name_size);
    if (flags & kEncryptedFlag) return Bad("entry " + name + " is encrypted");
    if (method != 0) {
      return Bad("entry " + name + " is compressed (method " + std::to_string(method) +
                 "); only stored entries are supported");
    }
    if (size == 0xffffffffu || local_offset == 0xffffffffu) {
      return Bad("ZIP64 archives are not supported");
    }
    if (compressed_size != size) return Bad("stored entry " + name + " has two sizes");
    if (!Inside(local_offset, kLocalHeaderSize, directory_offset) ||
        U32(archive, local_offset) != kLocalHeader || U16(archive, local_offset + 8) != method ||
        U16(archive, local_offset + 26) != name_size) {
      return Bad("the local header of entry " + name + " is malformed");
    }
    const uint64_t data_offset =
        uint64_t{local_offset} + kLocalHeaderSize + name_size + U16(archive, local_offset + 28);
    if (!Inside(data_offset, size, directory_offset)) {
      return Bad("the data of entry " + name + " lies outside the archive");
    }
    std::span<const uint8_t> data = archive.subspan(data_offset, size);
    if (Crc32(data) != crc) return Bad("entry " + name + " fails its CRC-32 check");
    if (!names.insert(name).second) return Bad("entry " + name + " appears twice");
    entries.push_back({std::move(name), data});
    at += entry_size;
  }
  return entries;
}

std::vector<uint8_t> WriteStoredZip(const std::vector<ZipFileEntry>& entries) {
  std::vector<uint8_t> out, directory;
  for (const ZipFileEntry& entry : entries) {
    const auto offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = Crc32(entry.data);
    // Pad the local header's extra field so the data start on a 64-byte boundary.
    const size_t header_end = out.size() + 30 + entry.name.size() + 4;
    const size_t padding = (kDataAlignment - header_end % kDataAlignment) % kDataAlignment;
    PutU32(out, 0x04034b50);
    PutU16(out, 0);  // version needed
    PutU16(out, 0);  // flags
    PutU16(out, 0);  // method: stored
    PutU32(out, 0);  // time, date
    PutU32(out, crc);
    PutU32(out, static_cast<uint32_t>(entry.data.size()));
    PutU32(out, static_cast<uint32_t>(entry.data.size()));
    PutU16(out, static_cast<uint32_t>(entry.name.size()));
    PutU16(out, static_cast<uint32_t>(4 + padding));
    PutBytes(out, entry.name);
    PutBytes(out, "FB");
    PutU16(out, static_cast<uint32_t>(padding));
    out.insert(out.end(), padding, 'Z');
    out.insert(out.end(), entry.data.begin(), entry.data.end());

    PutU32(directory, 0x02014b50);
    PutU16(directory, 0);  // version made by
    PutU16(directory, 0);  // version needed
    PutU16(directory, 0);  // flags
    PutU16(directory, 0);  // method
    PutU32(directory, 0);  // time, date
    PutU32(directory, crc);
    PutU32(directory, static_cast<uint32_t>(entry.data.size()));
    PutU32(directory, static_cast<uint32_t>(entry.data.size()));
    PutU16(directory, static_cast<uint32_t>(entry.name.size()));
    PutU16(directory, 0);  // extra
    PutU16(directory, 0);  // comment
    PutU16(directory, 0);  // disk
    PutU16(directory, 0);  // internal attributes
    PutU32(directory, 0);  // external attributes
    PutU32(directory, offset);
    PutBytes(directory, entry.name);
  }
  const auto directory_offset = static_cast<uint32_t>(out.size());
  out.insert(out.end(), directory.begin(), directory.end());
  PutU32(out, 0x06054b50);
  PutU16(out, 0);  // this disk
  PutU16(out, 0);  // the directory's disk
  PutU16(out, static_cast<uint32_t>(entries.size()));
  PutU16(out, static_cast<uint32_t>(entries.size()));
  PutU32(out, static_cast<uint32_t>(directory.size()));
  PutU32(out, directory_offset);
  PutU16(out, 0);  // comment
  return out;
}

}  // namespace vllm
