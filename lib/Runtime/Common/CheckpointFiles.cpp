//===- CheckpointFiles.cpp - durable files and folders for checkpoints ----===//
//
// POSIX: what a checkpoint needs to be all-or-nothing on a crash (fsync of
// files and of the directories that name them, rename last), the peak
// resident set that the save and load figures report, and the crash test
// hook.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc::rt::ckpt {

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

std::string makeDirectories(const std::string &dir) {
  size_t at = 0;
  while (at <= dir.size()) {
    size_t slash = dir.find('/', at);
    if (slash == std::string::npos)
      slash = dir.size();
    std::string prefix = dir.substr(0, slash);
    at = slash + 1;
    if (prefix.empty())
      continue;
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return dir + ": cannot create the checkpoint directory: " +
             std::strerror(errno);
  }
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    return dir +
           ": cannot create the checkpoint directory: " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return dir + ": exists and is not a directory";
  return "";
}

std::string syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return dir +
           ": cannot open the directory to sync it: " + std::strerror(errno);
  int status = ::fsync(fd);
  int error = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); their renames are
  // as durable as they get.
  if (status != 0 && error != EINVAL)
    return dir + ": fsync of the directory failed: " + std::strerror(error);
  return "";
}

namespace {

std::string parentOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

} // namespace

std::string writeFileDurably(const std::string &path,
                             const std::string &content) {
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    return path + ": exists and is not a regular file; not replacing it";
  std::string temporary = path + ".tmp";
  ::unlink(temporary.c_str());
  int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return temporary + ": cannot create: " + std::strerror(errno);
  const char *data = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return temporary + ": write error: " + std::strerror(error);
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  if (::fsync(fd) != 0) {
    int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return temporary + ": fsync failed: " + std::strerror(error);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    return path + ": cannot rename " + temporary +
           " into place: " + std::strerror(error);
  }
  return syncDirectory(parentOf(path));
}

std::string readSmallFile(const std::string &path, std::string &content,
                          size_t limit) {
  content.clear();
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return path + ": cannot open: " + std::strerror(errno);
  char buffer[65536];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    content.append(buffer, got);
    if (content.size() > limit) {
      std::fclose(file);
      return path + ": larger than " + std::to_string(limit) +
             " bytes: not a checkpoint's";
    }
  }
  bool bad = std::ferror(file);
  std::fclose(file);
  if (bad)
    return path + ": read error";
  return "";
}

std::string listDirectory(const std::string &dir,
                          std::vector<std::string> &names) {
  names.clear();
  DIR *handle = ::opendir(dir.c_str());
  if (!handle)
    return dir + ": cannot list: " + std::strerror(errno);
  while (struct dirent *entry = ::readdir(handle)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  ::closedir(handle);
  return "";
}

std::string removeFolder(const std::string &dir) {
  struct stat info;
  if (::lstat(dir.c_str(), &info) != 0)
    return errno == ENOENT ? "" : dir + ": " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode))
    return dir + ": not a directory; not removing it";
  std::vector<std::string> names;
  if (std::string error = listDirectory(dir, names); !error.empty())
    return error;
  for (const std::string &name : names) {
    std::string path = joinPath(dir, name);
    if (::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
      return dir + ": holds a directory (" + name + "); not removing it";
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return path + ": cannot remove: " + std::strerror(errno);
  }
  if (::rmdir(dir.c_str()) != 0)
    return dir + ": cannot remove: " + std::strerror(errno);
  return "";
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool exists(const std::string &path) {
  struct stat info;
  return ::lstat(path.c_str(), &info) == 0;
}

size_t bufferBytes() {
  constexpr size_t kDefault = size_t(16) << 20;
  const char *text = std::getenv("ZEROC_CHECKPOINT_BUFFER");
  if (!text || !*text)
    return kDefault;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (*end == 'K' || *end == 'k')
    value <<= 10;
  else if (*end == 'M' || *end == 'm')
    value <<= 20;
  else if (*end == 'G' || *end == 'g')
    value <<= 30;
  // At least a page; a multiple of 8 so that no element is cut.
  return std::max<size_t>(4096, static_cast<size_t>(value) / 8 * 8);
}

//===----------------------------------------------------------------------===//
// Memory figures
//===----------------------------------------------------------------------===//

namespace {

int64_t statusBytes(const char *key) {
  FILE *file = std::fopen("/proc/self/status", "r");
  if (!file)
    return -1;
  char line[256];
  int64_t value = -1;
  size_t length = std::strlen(key);
  while (std::fgets(line, sizeof line, file))
    if (std::strncmp(line, key, length) == 0 && line[length] == ':') {
      value = std::strtoll(line + length + 1, nullptr, 10) * 1024;
      break;
    }
  std::fclose(file);
  return value;
}

} // namespace

void resetPeakResident() {
  // "5" resets the peak resident set size (Linux 4.0 and later).
  if (FILE *file = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", file);
    std::fclose(file);
  }
}

int64_t peakResidentBytes() { return statusBytes("VmHWM"); }
int64_t residentBytes() { return statusBytes("VmRSS"); }

//===----------------------------------------------------------------------===//
// The crash hook
//===----------------------------------------------------------------------===//

namespace {

/// Whether the environment variable `name` says POINT[@RANK] for this rank.
bool hookMatches(const char *name, const char *point) {
  const char *spec = std::getenv(name);
  if (!spec || !*spec)
    return false;
  std::string text = spec;
  int rank = 0;
  if (size_t at = text.find('@'); at != std::string::npos) {
    rank = std::atoi(text.c_str() + at + 1);
    text = text.substr(0, at);
  }
  return text == point && worldRank() == rank;
}

} // namespace

void crashPoint(const char *point) {
  if (!hookMatches("ZEROC_TEST_CRASH", point))
    return;
  std::fprintf(stderr, "zeroc: ZEROC_TEST_CRASH: rank %d killed at '%s'\n",
               worldRank(), point);
  std::fflush(stderr);
  std::raise(SIGKILL);
}

std::string failPoint(const char *point) {
  if (!hookMatches("ZEROC_TEST_FAIL", point))
    return "";
  return std::string("write error: injected at '") + point +
         "' (ZEROC_TEST_FAIL)";
}

} // namespace zeroc::rt::ckpt
