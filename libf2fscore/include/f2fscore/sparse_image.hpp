// Android sparse images: the container Android's build writes its
// partition images in (make_f2fs -S, sload.f2fs -S, img2simg) and fastboot
// flashes. A 28-byte file header, then chunks, each a 12-byte header and
// its payload, all little-endian (the format of libsparse's
// sparse_format.h, version 1.0):
//
//   file header:  magic 0xed26ff3a (u32), major 1 (u16), minor (u16),
//                 file_hdr_sz (u16, >= 28), chunk_hdr_sz (u16, >= 12),
//                 blk_sz (u32, a multiple of 4), total_blks (u32),
//                 total_chunks (u32), image_checksum (u32)
//   chunk header: chunk_type (u16), reserved (u16), chunk_sz (u32, blocks
//                 of the image it covers), total_sz (u32, bytes of the
//                 chunk in the file, its header included)
//   chunk types:  0xcac1 raw (chunk_sz * blk_sz bytes of data follow),
//                 0xcac2 fill (a 4-byte value repeated over the blocks),
//                 0xcac3 don't care (the blocks are not stored: zeroes
//                 here, as simg2img leaves them), 0xcac4 CRC32 (4 bytes,
//                 no blocks)
//
// The chunks cover blocks 0..total_blks-1 in order. open_sparse_image()
// reads the chunk headers once (no data) and serves reads of the image
// they describe from the file: the read-side tools open sparse images as
// they open raw ones. libsparse has no reader for random access, only
// conversion; the tools' -S output goes through libsparse itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

inline constexpr std::uint32_t kSparseMagic = 0xed26ff3a;

/// Whether `file` starts with the sparse image magic (little-endian).
/// False for a device shorter than 4 bytes. Errors: the read's.
Result<bool> is_sparse_image(BlockDevice& file);

/// A read-only device of total_blks * blk_sz bytes presenting the image the
/// sparse file `file` describes; DeviceKind and name are the file's,
/// logical block size 512 (any offset a multiple of 512 reads). The chunk
/// index holds one entry per chunk. next_data()/next_hole() report the
/// don't-care chunks as holes; host_descriptor() is -1 (the file's bytes
/// are not the image's). CRC32 chunks and image_checksum are not verified.
/// Errors: Errc::corrupt naming what is wrong (bad magic, a major version
/// other than 1, header sizes below 28/12, blk_sz not a positive multiple
/// of 4, an unknown chunk type, a chunk whose total_sz does not match its
/// type and chunk_sz, chunks covering more or fewer than total_blks
/// blocks, an image larger than 2^63 bytes, a file that ends inside a
/// chunk, total_chunks not reached); the file's read errors.
Result<std::unique_ptr<BlockDevice>> open_sparse_image(std::unique_ptr<BlockDevice> file);

namespace detail {
/// The message of a writable open of a sparse image (open_device()).
std::string sparse_write_refusal(const std::string& path);
}  // namespace detail

}  // namespace f2fscore
