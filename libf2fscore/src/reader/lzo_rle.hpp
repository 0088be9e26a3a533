// An LZO1X decoder that also understands Linux's lzo-rle bitstream (private).
//
// No packaged library decodes lzo-rle, so this one is ours, written from the
// format's description (Documentation/staging/lzo.rst in Linux) and the
// acceptance rules of lzo1x_decompress_safe() in lib/lzo/, which f2fs uses
// for both its LZO and LZO-RLE algorithms:
//
//   - a stream of at least 5 bytes starting with byte 17 carries a bitstream
//     version in its second byte (1 = lzo-rle); otherwise it is version 0,
//     plain LZO1X-1;
//   - in version >= 1, the 16..31 (M4) instruction with the H bit set and a
//     distance field of 0x3fff ("distance 0xbfff") is a run of zeroes whose
//     length is ((next byte << 3) | LLL) + 4;
//   - the stream ends with the M4 instruction of distance 0 and length 3, and
//     must end exactly there.
//
// Byte-oriented (no unaligned or host-endian loads), so it is the same on
// big-endian and 32-bit hosts. Every read and write is bounds-checked: any
// input, however damaged, yields an error and never touches memory outside
// `in` and `out`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace f2fscore::lzo {

/// Outcomes, named after the kernel's LZO_E_* codes.
enum class Status : std::uint8_t {
  ok,
  input_overrun,       ///< the input ends in the middle of an instruction
  output_overrun,      ///< the output would exceed `out`
  lookbehind_overrun,  ///< a match reaches back before the start of the output
  bad_end_marker,      ///< the end-of-stream instruction has a length other than 3
  input_not_consumed,  ///< bytes follow the end-of-stream instruction
};

/// "input overrun", "lookbehind overrun", ...
std::string_view status_name(Status s) noexcept;

struct DecodeResult {
  Status status = Status::ok;
  std::size_t produced = 0;   ///< bytes written to `out` (also on error)
  std::size_t consumed = 0;   ///< input bytes read when decoding stopped
  std::uint8_t version = 0;   ///< bitstream version (0 LZO1X, 1 lzo-rle)
};

/// Decodes one LZO1X / lzo-rle stream from `in` into `out` (at most
/// out.size() bytes). Accepts exactly what Linux's lzo1x_decompress_safe()
/// accepts.
DecodeResult decompress(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) noexcept;

}  // namespace f2fscore::lzo
