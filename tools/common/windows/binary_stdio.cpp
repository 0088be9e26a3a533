// Linked into every tool on Windows: standard output and error in binary
// mode before main(), so that a tool writes the same bytes as on Linux (LF
// line ends, the contents of dump cat).
#include <fcntl.h>
#include <io.h>

#include <cstdio>

namespace {

const int kBinaryStdio = [] {
  ::_setmode(::_fileno(stdout), _O_BINARY);
  ::_setmode(::_fileno(stderr), _O_BINARY);
  return 0;
}();

}  // namespace
