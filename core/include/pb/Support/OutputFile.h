//===- OutputFile.h - Output files written safely for any kind of path ----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every file that a PolyBlocks tool or the C API writes at a path it was
// given (artifacts, pb-opt's output, stage dumps, pb-run's outputs, the
// kernel cache) goes through OutputFile, which treats the path by its kind:
//
// - `-`: standard output;
// - a path that does not exist yet, or a regular file: written to a
//   temporary file beside it and renamed over it once complete, so that a
//   reader never sees half a file (an existing file keeps its permissions);
// - a character or block device or a FIFO (`/dev/null`, a pipe): opened and
//   written in place, never renamed over or removed;
// - a symbolic link: followed, and its target treated by the rules above
//   (the link stays a link); a dangling link is written through in place;
// - a directory or a socket: an error.
//
// On failure (or when the OutputFile is destroyed without commit()), only
// the temporary file of its own is removed, never the path it was given.
//
//===----------------------------------------------------------------------===//

#ifndef PB_SUPPORT_OUTPUTFILE_H
#define PB_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::pb {

class OutputFile {
public:
  /// How the path is written.
  enum class Kind {
    Stdout,  ///< `-`
    Replace, ///< a temporary file renamed over the (resolved) path
    InPlace, ///< a device, a FIFO or a dangling link's target, opened as is
  };

  /// Opens `path` for writing by the rules above; the error names the path.
  static llvm::Expected<std::unique_ptr<OutputFile>> open(llvm::StringRef path);

  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  llvm::raw_ostream &os() { return *stream; }
  Kind getKind() const { return kind; }
  /// The path given to open().
  llvm::StringRef getPath() const { return path; }

  /// Finishes the file: flushes and closes it and, for Kind::Replace, renames
  /// the temporary file over the resolved path. On an error the temporary
  /// file is removed and the path is left as it was.
  llvm::Error commit();

private:
  OutputFile(std::string path, std::string target, std::string temp, Kind kind,
             std::unique_ptr<llvm::raw_fd_ostream> stream);
  void closeStream();
  void discard();

  std::string path;   ///< as given
  std::string target; ///< the path written, symbolic links resolved
  std::string temp;   ///< Kind::Replace: the temporary file
  Kind kind;
  std::unique_ptr<llvm::raw_fd_ostream> stream;
  bool streamClosed = false;
  bool done = false;
};

/// Writes what `write` prints to `path` through an OutputFile.
llvm::Error
writeOutputFile(llvm::StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Writes `bytes` to `path` through an OutputFile.
llvm::Error writeOutputFile(llvm::StringRef path, llvm::StringRef bytes);

} // namespace mlir::pb

#endif // PB_SUPPORT_OUTPUTFILE_H
