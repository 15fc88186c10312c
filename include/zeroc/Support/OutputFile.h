//===- OutputFile.h - outputs that never destroy what they replace -*- C++ -*-===//
//
// Every file zeroc writes (the driver's -o, the executables' --log-json and
// --save, safetensors files) goes through here, so that writing an output
// never destroys what is at its path:
//
// * a new path, or a regular file, is written under a temporary name in the
//   same directory and renamed over the path only once it is complete: a
//   failure leaves the old file as it was and no partial file behind;
// * a symbolic link is followed: the file it points to is replaced, the
//   link stays;
// * anything else that exists (a character or block device such as
//   /dev/null, a FIFO, a socket) is opened and written in place, as
//   compilers do, and is never renamed over, truncated or removed;
// * a directory is an error.
//
// Plain C++17 and POSIX: the runtime links this too. Every function that
// can fail returns an error message ("" on success) naming the path.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_OUTPUTFILE_H
#define ZEROC_SUPPORT_OUTPUTFILE_H

#include <cstddef>
#include <cstdio>
#include <string>

namespace zeroc::output {

/// What an output path names, after following symbolic links.
enum class Kind {
  Missing, ///< nothing there yet (a new file)
  Regular, ///< a regular file
  Special, ///< a device, a FIFO or a socket: written in place
  Directory,
};

/// Follows symbolic links from `path` to the file they end at (or would
/// create, for a dangling link); `path` itself when it is no link.
std::string resolve(const std::string &path);

/// The kind of `path`, after following symbolic links.
Kind classify(const std::string &path);

/// Writes `size` bytes to `path` by the rules above. With `mode` >= 0, a
/// file this creates gets these permission bits (else 0666 minus the
/// umask, or the permissions of the regular file it replaces).
std::string writeFile(const std::string &path, const void *data, size_t size,
                      int mode = -1);

/// Moves the finished file `temporary` (written by someone else, e.g. a
/// compiler) to `path` by the rules above: renamed over a regular file or
/// a new path; copied into a device or FIFO in place and then removed.
/// `temporary` is removed on failure too.
std::string commitTemporary(const std::string &temporary,
                            const std::string &path);

/// The temporary name for an output at `path`: in the directory of the
/// file `path` resolves to, ".NAME.tmp-PID-N" followed by `suffix` (which
/// keeps an extension a compiler needs, ".cpp"). Unique within a process;
/// nothing is created.
std::string temporaryName(const std::string &path,
                          const std::string &suffix = "");

/// An output written as a stream (the executables' JSON Lines log): open()
/// creates the temporary (or opens a device in place), stream() is where
/// to write, commit() closes and renames, discard() drops the temporary.
/// Destroying an Output that was neither committed nor discarded discards.
class Stream {
public:
  Stream() = default;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  ~Stream();

  /// With `visibleTemporary`, the temporary is PATH.partial (a log the
  /// user may follow while the run lasts) instead of a hidden unique name.
  std::string open(const std::string &path, bool visibleTemporary = false);
  std::FILE *stream() const { return file; }
  /// Where the bytes go until commit(): the temporary, or the path itself
  /// for a device or FIFO.
  const std::string &writingTo() const { return current; }
  std::string commit();
  void discard();

private:
  std::string path, target, current;
  std::FILE *file = nullptr;
  bool inPlace = false;
};

} // namespace zeroc::output

#endif // ZEROC_SUPPORT_OUTPUTFILE_H
