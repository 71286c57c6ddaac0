//===- OutputFile.cpp - Output files written safely for any kind of path --===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <unistd.h>

using namespace llvm;
using mlir::pb::OutputFile;

static Error cannotWrite(const Twine &path, const Twine &why) {
  return createStringError(inconvertibleErrorCode(),
                           "cannot write '" + path + "': " + why);
}

static Error cannotWrite(const Twine &path, std::error_code ec) {
  return cannotWrite(path, ec.message());
}

OutputFile::OutputFile(std::string path, std::string target, std::string temp,
                       Kind kind, std::unique_ptr<raw_fd_ostream> stream)
    : path(std::move(path)), target(std::move(target)), temp(std::move(temp)),
      kind(kind), stream(std::move(stream)) {}

Expected<std::unique_ptr<OutputFile>> OutputFile::open(StringRef path) {
  auto make = [&](std::string target, std::string temp, Kind kind, int fd,
                  bool shouldClose) {
    return std::unique_ptr<OutputFile>(
        new OutputFile(path.str(), std::move(target), std::move(temp), kind,
                       std::make_unique<raw_fd_ostream>(fd, shouldClose)));
  };
  if (path == "-")
    return make("-", "", Kind::Stdout, STDOUT_FILENO, /*shouldClose=*/false);
  if (path.empty())
    return cannotWrite(path, "the path is empty");

  // The path itself (a link is not followed here).
  std::string target = path.str();
  sys::fs::file_status linkStatus;
  std::error_code ec = sys::fs::status(path, linkStatus, /*Follow=*/false);
  if (!ec && linkStatus.type() == sys::fs::file_type::symlink_file) {
    SmallString<256> resolved;
    if (sys::fs::real_path(path, resolved)) {
      // A dangling link: written through in place (creating its target).
      int fd;
      if (std::error_code openEc = sys::fs::openFileForWrite(
              path, fd, sys::fs::CD_CreateAlways, sys::fs::OF_None))
        return cannotWrite(path, openEc);
      return make(target, "", Kind::InPlace, fd, /*shouldClose=*/true);
    }
    target = resolved.str().str();
  } else if (ec && ec != std::errc::no_such_file_or_directory) {
    return cannotWrite(path, ec);
  }

  sys::fs::file_status status;
  ec = sys::fs::status(target, status);
  bool exists = !ec;
  if (ec && ec != std::errc::no_such_file_or_directory)
    return cannotWrite(path, ec);
  if (exists) {
    switch (status.type()) {
    case sys::fs::file_type::regular_file:
      break;
    case sys::fs::file_type::character_file:
    case sys::fs::file_type::block_file:
    case sys::fs::file_type::fifo_file: {
      // Written where it is: a device or a pipe is never replaced.
      int fd;
      if (std::error_code openEc = sys::fs::openFileForWrite(
              target, fd, sys::fs::CD_OpenExisting, sys::fs::OF_None))
        return cannotWrite(path, openEc);
      return make(target, "", Kind::InPlace, fd, /*shouldClose=*/true);
    }
    case sys::fs::file_type::directory_file:
      return cannotWrite(path, "it is a directory");
    case sys::fs::file_type::socket_file:
      return cannotWrite(path, "it is a socket");
    default:
      return cannotWrite(path, "it is not a regular file, a device or a FIFO");
    }
  }

  // A regular file or a new one: a temporary file beside it, renamed over
  // it by commit().
  int fd;
  SmallString<256> temp;
  if (std::error_code tempEc = sys::fs::createUniqueFile(
          target + ".tmp-%%%%%%", fd, temp, sys::fs::OF_None))
    return cannotWrite(path, tempEc);
  sys::RemoveFileOnSignal(temp);
  if (exists) {
    // The replaced file's permissions, not the umask's default.
    if (std::error_code permEc =
            sys::fs::setPermissions(fd, status.permissions())) {
      ::close(fd);
      sys::fs::remove(temp);
      sys::DontRemoveFileOnSignal(temp);
      return cannotWrite(path, permEc);
    }
  }
  return make(target, temp.str().str(), Kind::Replace, fd,
              /*shouldClose=*/true);
}

void OutputFile::closeStream() {
  if (streamClosed)
    return;
  streamClosed = true;
  if (kind == Kind::Stdout)
    stream->flush();
  else
    stream->close();
}

void OutputFile::discard() {
  if (done)
    return;
  done = true;
  closeStream();
  stream->clear_error();
  if (kind == Kind::Replace) {
    sys::fs::remove(temp);
    sys::DontRemoveFileOnSignal(temp);
  }
}

OutputFile::~OutputFile() { discard(); }

Error OutputFile::commit() {
  if (done)
    return cannotWrite(path, "the file was already committed");
  closeStream();
  if (stream->has_error()) {
    std::error_code ec = stream->error();
    discard();
    return cannotWrite(path, ec);
  }
  if (kind == Kind::Replace) {
    if (std::error_code ec = sys::fs::rename(temp, target)) {
      discard();
      return cannotWrite(path, ec);
    }
    sys::DontRemoveFileOnSignal(temp);
  }
  done = true;
  return Error::success();
}

Error mlir::pb::writeOutputFile(StringRef path,
                                function_ref<void(raw_ostream &)> write) {
  Expected<std::unique_ptr<OutputFile>> file = OutputFile::open(path);
  if (!file)
    return file.takeError();
  write((*file)->os());
  return (*file)->commit();
}

Error mlir::pb::writeOutputFile(StringRef path, StringRef bytes) {
  return writeOutputFile(path, [&](raw_ostream &os) { os << bytes; });
}
