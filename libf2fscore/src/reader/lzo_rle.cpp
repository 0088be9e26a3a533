// LZO1X / lzo-rle decoding (see reader/lzo_rle.hpp for the format notes).
//
// The stream is a sequence of instructions. Each instruction byte selects
// one of a few forms; most copy a match from the output already produced
// ("the dictionary") and then 0..3 literal bytes straight from the input.
// How many literals the previous instruction copied (0, 1..3, or 4+) is the
// decoder's only state, and it changes the meaning of instruction bytes
// 0..15. Every well-formed stream ends with a 3-byte end marker, which is why
// a literal copy must leave 3 input bytes behind it.
#include "reader/lzo_rle.hpp"

namespace f2fscore::lzo {

std::string_view status_name(Status s) noexcept {
  switch (s) {
    case Status::ok: return "ok";
    case Status::input_overrun: return "input overrun";
    case Status::output_overrun: return "output overrun";
    case Status::lookbehind_overrun: return "lookbehind overrun";
    case Status::bad_end_marker: return "bad end-of-stream marker";
    case Status::input_not_consumed: return "input not consumed";
  }
  return "unknown";
}

namespace {

// The distance bias of the 3-byte short match that follows a run of 4+
// literals (instruction 0..15 in state 4): 2 KiB + 1.
constexpr std::size_t kFarShortMatchBias = 0x801;
// M4 matches reach 16 KiB further than their encoded distance.
constexpr std::size_t kM4Bias = 0x4000;
// Shortest zero run the lzo-rle form encodes.
constexpr std::size_t kMinZeroRun = 4;

class Decoder {
 public:
  Decoder(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) : in_(in), out_(out) {}

  DecodeResult run() {
    Status s = decode();
    return DecodeResult{s, op_, ip_, version_};
  }

 private:
  std::size_t in_left() const { return in_.size() - ip_; }
  std::size_t out_left() const { return out_.size() - op_; }
  bool have_in(std::size_t n) const { return in_left() >= n; }

  // Literal copy of n bytes; the input must keep 3 bytes behind them.
  Status literals(std::size_t n) {
    if (n > out_left()) return Status::output_overrun;
    if (n > in_left() || in_left() - n < 3) return Status::input_overrun;
    for (std::size_t i = 0; i < n; ++i) out_[op_ + i] = in_[ip_ + i];
    op_ += n;
    ip_ += n;
    return Status::ok;
  }

  // A length whose small field was zero: each zero byte adds 255, the first
  // non-zero byte ends it and is added with `base`. Returns false if the
  // input ends first.
  bool extended_length(std::size_t base, std::size_t& len) {
    std::size_t zeros = 0;
    for (;;) {
      if (!have_in(1)) return false;
      if (in_[ip_] != 0) break;
      ++zeros;
      ++ip_;
    }
    len = zeros * 255 + base + in_[ip_++];
    return true;
  }

  std::size_t le16() const { return static_cast<std::size_t>(in_[ip_]) | static_cast<std::size_t>(in_[ip_ + 1]) << 8; }

  // Copies `len` bytes from `dist` bytes back; overlapping copies repeat.
  Status match(std::size_t dist, std::size_t len) {
    if (dist > op_) return Status::lookbehind_overrun;
    if (len > out_left()) return Status::output_overrun;
    for (std::size_t i = 0; i < len; ++i, ++op_) out_[op_] = out_[op_ - dist];
    return Status::ok;
  }

  Status decode() {
    if (in_.size() < 3) return Status::input_overrun;
    if (in_.size() >= 5 && in_[0] == 17) {
      version_ = in_[1];
      ip_ = 2;
    }
    std::size_t state = 0;  // literals copied by the previous instruction (4 = four or more)
    // The first instruction may be a bare literal run: bytes 18..255.
    if (in_[ip_] > 17) {
      const std::size_t n = in_[ip_++] - 17u;
      if (Status s = literals(n); s != Status::ok) return s;
      state = n < 4 ? n : 4;
    }
    for (;;) {
      if (!have_in(1)) return Status::input_overrun;
      const std::size_t t = in_[ip_++];
      std::size_t dist = 0, len = 0, trailing = 0;
      if (t < 16) {
        if (state == 0) {
          // 0000LLLL: a literal run of 4+ bytes (L = 0: extended).
          if (t == 0) {
            if (!extended_length(15, len)) return Status::input_overrun;
          } else {
            len = t;
          }
          if (Status s = literals(len + 3); s != Status::ok) return s;
          state = 4;
          continue;
        }
        // 0000DDSS + one byte: a 2-byte match within 1 KiB after 1..3
        // literals, a 3-byte match 2..3 KiB back after 4+.
        if (!have_in(1)) return Status::input_overrun;
        const std::size_t far = (t >> 2) + (static_cast<std::size_t>(in_[ip_++]) << 2);
        trailing = t & 3;
        if (state < 4) {
          dist = far + 1;
          len = 2;
        } else {
          dist = far + kFarShortMatchBias;
          len = 3;
        }
      } else if (t >= 64) {
        // 1LLDDDSS / 01LDDDSS + one byte: 3..8 bytes within 2 KiB.
        if (!have_in(1)) return Status::input_overrun;
        dist = ((t >> 2) & 7) + (static_cast<std::size_t>(in_[ip_++]) << 3) + 1;
        len = (t >> 5) + 1;
        trailing = t & 3;
      } else if (t >= 32) {
        // 001LLLLL + LE16 (DDDDDDDD DDDDDDSS): within 16 KiB.
        len = t & 31;
        if (len == 0 && !extended_length(31, len)) return Status::input_overrun;
        len += 2;
        if (!have_in(2)) return Status::input_overrun;
        const std::size_t v = le16();
        ip_ += 2;
        dist = (v >> 2) + 1;
        trailing = v & 3;
      } else {
        // 0001HLLL + LE16: 16..48 KiB back; distance 16 KiB is the end of
        // the stream; in lzo-rle, H = 1 with all-ones D bits is a zero run.
        if (!have_in(2)) return Status::input_overrun;
        std::size_t v = le16();
        if (version_ != 0 && (t & 0xf8) == 0x18 && (v & 0xfffc) == 0xfffc) {
          if (!have_in(3)) return Status::input_overrun;
          const std::size_t run = ((t & 7) | static_cast<std::size_t>(in_[ip_ + 2]) << 3) + kMinZeroRun;
          if (run > out_left()) return Status::output_overrun;
          for (std::size_t i = 0; i < run; ++i) out_[op_ + i] = 0;
          op_ += run;
          ip_ += 3;
          state = v & 3;
          if (Status s = literals(state); s != Status::ok) return s;
          continue;
        }
        const std::size_t high = (t & 8) << 11;
        len = t & 7;
        if (len == 0) {
          if (!extended_length(7, len)) return Status::input_overrun;
          if (!have_in(2)) return Status::input_overrun;
          v = le16();
        }
        len += 2;
        ip_ += 2;
        const std::size_t d = high + (v >> 2);
        if (d == 0) {
          // End of stream: only the 3-byte form, and nothing after it.
          if (len != 3) return Status::bad_end_marker;
          return ip_ == in_.size() ? Status::ok : Status::input_not_consumed;
        }
        dist = d + kM4Bias;
        trailing = v & 3;
      }
      if (Status s = match(dist, len); s != Status::ok) return s;
      state = trailing;
      if (Status s = literals(trailing); s != Status::ok) return s;
    }
  }

  std::span<const std::uint8_t> in_;
  std::span<std::uint8_t> out_;
  std::size_t ip_ = 0;
  std::size_t op_ = 0;
  std::uint8_t version_ = 0;
};

}  // namespace

DecodeResult decompress(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) noexcept {
  return Decoder(in, out).run();
}

}  // namespace f2fscore::lzo
