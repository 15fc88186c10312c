//===- OutputFile.cpp - outputs that never destroy what they replace ------===//

#include "zeroc/Support/OutputFile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc::output {

namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string errnoText(int error) { return std::strerror(error); }

/// Writes all of `data` to `fd`; false with errno set on failure.
bool writeAll(int fd, const void *data, size_t size) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

/// The permission bits a new output gets: those of the regular file it
/// replaces, else what open(2) gives with the umask.
mode_t modeFor(const std::string &target, int mode) {
  if (mode >= 0)
    return static_cast<mode_t>(mode);
  struct stat info;
  if (::stat(target.c_str(), &info) == 0 && S_ISREG(info.st_mode))
    return info.st_mode & 07777;
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

/// Copies the file `from` into the already existing special file `to`,
/// opened for writing in place (never created, truncated or removed).
std::string copyInto(const std::string &from, const std::string &to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return from + ": cannot read: " + errnoText(errno);
  int out = ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    int error = errno;
    ::close(in);
    return to + ": cannot open for writing: " + errnoText(error);
  }
  std::vector<char> buffer(1 << 16);
  std::string failure;
  while (failure.empty()) {
    ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      failure = from + ": read error: " + errnoText(errno);
    else if (got == 0)
      break;
    else if (!writeAll(out, buffer.data(), static_cast<size_t>(got)))
      failure = to + ": write error: " + errnoText(errno);
  }
  ::close(in);
  if (::close(out) != 0 && failure.empty())
    failure = to + ": write error: " + errnoText(errno);
  return failure;
}

} // namespace

std::string resolve(const std::string &path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
      return current;
    std::vector<char> target(4096);
    ssize_t length = ::readlink(current.c_str(), target.data(), target.size());
    if (length <= 0 || static_cast<size_t>(length) >= target.size())
      return current;
    std::string next(target.data(), static_cast<size_t>(length));
    current = next[0] == '/' ? next : directoryOf(current) + "/" + next;
  }
  return current;
}

Kind classify(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return Kind::Missing;
  if (S_ISREG(info.st_mode))
    return Kind::Regular;
  if (S_ISDIR(info.st_mode))
    return Kind::Directory;
  return Kind::Special;
}

std::string temporaryName(const std::string &path, const std::string &suffix) {
  static std::atomic<unsigned> counter{0};
  std::string target = resolve(path);
  return directoryOf(target) + "/." + baseOf(target) + ".tmp-" +
         std::to_string(::getpid()) + "-" + std::to_string(counter++) + suffix;
}

std::string writeFile(const std::string &path, const void *data, size_t size,
                      int mode) {
  Kind kind = classify(path);
  if (kind == Kind::Directory)
    return path + ": is a directory";
  if (kind == Kind::Special) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return path + ": cannot open for writing: " + errnoText(errno);
    bool ok = writeAll(fd, data, size);
    int error = errno;
    if (::close(fd) != 0 && ok) {
      ok = false;
      error = errno;
    }
    return ok ? "" : path + ": write error: " + errnoText(error);
  }
  std::string target = resolve(path);
  std::string temporary = temporaryName(path);
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  modeFor(target, mode));
  if (fd < 0)
    return path + ": cannot create " + temporary + ": " + errnoText(errno);
  bool ok = writeAll(fd, data, size);
  int error = errno;
  if (ok && ::fchmod(fd, modeFor(target, mode)) != 0) {
    ok = false;
    error = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    ::unlink(temporary.c_str());
    return path + ": write error on " + temporary + ": " + errnoText(error);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    error = errno;
    ::unlink(temporary.c_str());
    return path + ": cannot rename " + temporary + " into place: " +
           errnoText(error);
  }
  return "";
}

std::string commitTemporary(const std::string &temporary,
                            const std::string &path) {
  Kind kind = classify(path);
  std::string failure;
  if (kind == Kind::Directory) {
    failure = path + ": is a directory";
  } else if (kind == Kind::Special) {
    failure = copyInto(temporary, path);
  } else {
    std::string target = resolve(path);
    if (::rename(temporary.c_str(), target.c_str()) == 0)
      return "";
    if (errno != EXDEV) {
      failure = path + ": cannot rename " + temporary + " into place: " +
                errnoText(errno);
    } else {
      // The temporary is on another file system: copy it beside the
      // target first, then rename that.
      struct stat info;
      int mode = ::stat(temporary.c_str(), &info) == 0
                     ? static_cast<int>(info.st_mode & 07777)
                     : -1;
      std::string beside = temporaryName(path);
      int fd = ::open(beside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                      mode >= 0 ? mode : 0666);
      if (fd < 0) {
        failure = path + ": cannot create " + beside + ": " + errnoText(errno);
      } else {
        ::close(fd);
        failure = copyInto(temporary, beside);
        if (failure.empty() && mode >= 0)
          ::chmod(beside.c_str(), static_cast<mode_t>(mode));
        if (failure.empty() && ::rename(beside.c_str(), target.c_str()) != 0)
          failure = path + ": cannot rename " + beside + " into place: " +
                    errnoText(errno);
        if (!failure.empty())
          ::unlink(beside.c_str());
      }
    }
  }
  ::unlink(temporary.c_str());
  return failure;
}

Stream::~Stream() { discard(); }

std::string Stream::open(const std::string &outputPath,
                         bool visibleTemporary) {
  discard();
  path = outputPath;
  Kind kind = classify(path);
  if (kind == Kind::Directory)
    return path + ": is a directory";
  inPlace = kind == Kind::Special;
  int fd;
  if (inPlace) {
    current = path;
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return path + ": cannot open for writing: " + errnoText(errno);
  } else {
    target = resolve(path);
    current = temporaryName(path);
    if (visibleTemporary) {
      // PATH.partial: a regular file a previous run left may be replaced;
      // anything else there keeps the hidden unique name.
      std::string partial = target + ".partial";
      Kind there = classify(partial);
      if (there == Kind::Missing || there == Kind::Regular) {
        ::unlink(partial.c_str());
        current = partial;
      }
    }
    fd = ::open(current.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                modeFor(target, -1));
    if (fd < 0)
      return path + ": cannot create: " + errnoText(errno);
  }
  file = ::fdopen(fd, "w");
  if (!file) {
    int error = errno;
    ::close(fd);
    if (!inPlace)
      ::unlink(current.c_str());
    return path + ": cannot open for writing: " + errnoText(error);
  }
  return "";
}

std::string Stream::commit() {
  if (!file)
    return "";
  bool ok = std::fflush(file) == 0 && !std::ferror(file);
  int error = errno;
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    error = errno;
  }
  file = nullptr;
  if (inPlace)
    return ok ? "" : path + ": write error: " + errnoText(error);
  if (!ok) {
    ::unlink(current.c_str());
    return path + ": write error: " + errnoText(error);
  }
  if (::rename(current.c_str(), target.c_str()) != 0) {
    error = errno;
    ::unlink(current.c_str());
    return path + ": cannot rename " + current + " into place: " +
           errnoText(error);
  }
  return "";
}

void Stream::discard() {
  if (!file)
    return;
  std::fclose(file);
  file = nullptr;
  if (!inPlace)
    ::unlink(current.c_str());
}

} // namespace zeroc::output
