#include "meta/meta_test_util.hpp"
using namespace metatest;
TEST(Dbg, A) {
  auto dev = rich(kRichFeatures);
  auto v = Volume::open(*dev);
  auto p = meta::plan_from_volume(**v);
  if (!p) printf("rich: %s\n", p.error().to_string().c_str());
  auto d2 = fixture("linux61-compress.img.zst");
  auto v2 = Volume::open(*d2);
  auto p2 = meta::plan_from_volume(**v2);
  ASSERT_TRUE(p2);
  std::map<uint32_t,int> per;
  for (auto& b : p2->blocks) per[(*v2)->segno_of(b.blkaddr)]++;
  for (uint32_t s = 0; s < (*v2)->main_segments(); ++s) {
    auto e = (*v2)->segment(s);
    if (e->valid_blocks || per[s]) printf("seg %u sit %u type %u plan %d\n", s, e->valid_blocks, e->type, per[s]);
  }
}
