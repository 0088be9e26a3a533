// SSA: one summary block per main-area segment, one 7-byte entry per block
// saying who owns it (node: its nid; data: the dnode nid and the offset in
// it). Summary blocks in a CP pack also carry the NAT or SIT journal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/endian.hpp"

namespace f2fscore::disk {

struct Summary {
  Le32 nid;               ///< owner: the node's nid, or the dnode holding the data address
  std::uint8_t version;   ///< NAT version of the owner (node/data consistency)
  Le16 ofs_in_node;       ///< data: index of the address in the dnode
};
static_assert(sizeof(Summary) == 7);

inline constexpr std::uint32_t kEntriesInSum = 512;
inline constexpr std::uint32_t kSumEntrySize = sizeof(Summary);
inline constexpr std::uint32_t kSumFooterSize = 5;
inline constexpr std::uint32_t kSumJournalSize =
    kBlockSize - kSumFooterSize - kSumEntrySize * kEntriesInSum;  // 507
static_assert(kSumJournalSize == 507);

inline constexpr std::uint8_t kSumTypeData = 0;
inline constexpr std::uint8_t kSumTypeNode = 1;

struct NatJournalEntry {
  Le32 nid;
  NatEntry ne;
};
static_assert(sizeof(NatJournalEntry) == 13);
struct SitJournalEntry {
  Le32 segno;
  SitEntry se;
};
static_assert(sizeof(SitJournalEntry) == 78);

inline constexpr std::uint32_t kNatJournalEntries = (kSumJournalSize - 2) / sizeof(NatJournalEntry);  // 38
inline constexpr std::uint32_t kNatJournalReserved = (kSumJournalSize - 2) % sizeof(NatJournalEntry);
inline constexpr std::uint32_t kSitJournalEntries = (kSumJournalSize - 2) / sizeof(SitJournalEntry);  // 6
inline constexpr std::uint32_t kSitJournalReserved = (kSumJournalSize - 2) % sizeof(SitJournalEntry);
static_assert(kNatJournalEntries == 38 && kSitJournalEntries == 6);

struct NatJournal {
  NatJournalEntry entries[kNatJournalEntries];
  std::uint8_t reserved[kNatJournalReserved];
};
struct SitJournal {
  SitJournalEntry entries[kSitJournalEntries];
  std::uint8_t reserved[kSitJournalReserved];
};

/// The journal area: a count (n_nats or n_sits) then the entries.
struct Journal {
  Le16 n_entries;  ///< n_nats in NAT journals, n_sits in SIT journals
  union {
    NatJournal nat_j;
    SitJournal sit_j;
    std::uint8_t extra_info[kSumJournalSize - 2];
  };
};
static_assert(sizeof(Journal) == kSumJournalSize);

struct SummaryFooter {
  std::uint8_t entry_type;  ///< kSumTypeData or kSumTypeNode
  Le32 check_sum;
};
static_assert(sizeof(SummaryFooter) == kSumFooterSize);

struct SummaryBlock {
  Summary entries[kEntriesInSum];
  Journal journal;
  SummaryFooter footer;
};
static_assert(sizeof(SummaryBlock) == kBlockSize);
static_assert(offsetof(SummaryBlock, journal) == 3584);

}  // namespace f2fscore::disk
