// f2fscore-corrupt: applies typed edits to an F2FS image, for tests and by
// hand (tests/fsck/corrupt.hpp has the grammar). Not installed.
//
//   f2fscore-corrupt IMAGE EDIT...
//   f2fscore-corrupt disk.img 'nat[5].block_addr=0xdeadbeef' 'inode[/a].i_links=0'
//
// Exit status: 0 every edit applied; 1 an edit failed (the ones before it
// are applied); 2 usage.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "f2fscore/device.hpp"
#include "fsck/corrupt.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Apply typed edits to an F2FS image (checksums re-sealed unless an edit starts with raw:)"};
  std::string image;
  std::vector<std::string> edits;
  bool where = false;
  app.add_option("image", image, "Image file or block device (written in place)")->required();
  app.add_option("edits", edits, "Edits, e.g. 'nat[5].block_addr=0', 'inode[/f].i_links-=1', 'cp.valid_block_count-=1'")
      ->required();
  app.add_flag("--where", where, "Print where each lookup target lives (nat[N], sit[S], ssa[B], dentry[/d/n]) instead of editing");
  app.footer("Exit status: 0 applied; 1 an edit failed (earlier edits stay applied); 2 usage.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  f2fscore::OpenOptions oo;
  oo.read_only = where;
  auto dev = f2fscore::open_posix_device(image, oo);
  if (!dev) {
    std::fprintf(stderr, "f2fscore-corrupt: %s\n", dev.error().to_string().c_str());
    return 1;
  }
  auto c = f2fstest::corrupt::Corruptor::open(**dev);
  if (!c) {
    std::fprintf(stderr, "f2fscore-corrupt: %s\n", c.error().to_string().c_str());
    return 1;
  }
  for (const auto& e : edits) {
    if (where) {
      const auto lb = e.find('['), rb = e.rfind(']');
      if (lb == std::string::npos || rb == std::string::npos || rb < lb) return 2;
      const std::string t = e.substr(0, lb), arg = e.substr(lb + 1, rb - lb - 1);
      f2fstest::corrupt::Result<f2fstest::corrupt::Loc> L = f2fscore::make_error(f2fscore::Errc::invalid_argument, "unknown target " + t);
      if (t == "dentry") {
        const auto sl = arg.rfind('/');
        auto d = (*c)->dentry(sl == 0 ? "/" : arg.substr(0, sl), arg.substr(sl + 1));
        if (d) {
          std::printf("%s: block %llu slot %u%s ino %u\n", e.c_str(), static_cast<unsigned long long>(d->blk), d->slot,
                      d->is_inline ? " (inline)" : "", d->de.ino.get());
          continue;
        }
        L = f2fscore::make_error(d.error());
      } else if (auto v = (*c)->resolve(arg, t == "ssa" || t == "sit")) {
        if (t == "nat") L = (*c)->nat_loc(static_cast<f2fscore::disk::nid_t>(*v));
        else if (t == "ssa") L = (*c)->ssa_loc(static_cast<f2fscore::disk::block_t>(*v));
        else if (t == "sit") L = (*c)->sit_loc(arg[0] == '/' ? (*c)->vol().segno_of(static_cast<f2fscore::disk::block_t>(*v)) : static_cast<std::uint32_t>(*v));
      } else {
        L = f2fscore::make_error(v.error());
      }
      if (!L) {
        std::fprintf(stderr, "f2fscore-corrupt: %s: %s\n", e.c_str(), L.error().to_string().c_str());
        return 1;
      }
      std::printf("%s: block %llu byte %u%s\n", e.c_str(), static_cast<unsigned long long>(L->blk), L->off,
                  L->in_cp_pack ? " (checkpoint pack)" : "");
      continue;
    }
    if (auto r = (*c)->apply(e); !r) {
      std::fprintf(stderr, "f2fscore-corrupt: %s: %s\n", e.c_str(), r.error().to_string().c_str());
      return 1;
    }
  }
  if (!where) (void)f2fscore::flush(**dev);
  if (!(*c)->stale().empty())
    std::fprintf(stderr, "f2fscore-corrupt: note: the volume no longer opens: %s\n", (*c)->stale().c_str());
  return 0;
}
