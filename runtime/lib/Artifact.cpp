//===- Artifact.cpp - Artifact files
//----------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An artifact file is
//   "PBARTIF1"                 8 bytes of magic
//   u64 metadata size, then the metadata (JSON)
//   u64 payload size, then the payload (the code, e.g. an ELF shared object)
// with sizes little-endian. It is written to a temporary file and renamed,
// so that a reader never sees a partial artifact.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::pb::runtime;

static constexpr llvm::StringLiteral kMagic = "PBARTIF1";

const char *pbArtifactGetMetadata(const pb_artifact *artifact) {
  return artifact ? artifact->metadata.c_str() : "";
}

void pbArtifactDestroy(pb_artifact *artifact) { delete artifact; }

static void writeU64(llvm::raw_ostream &os, uint64_t value) {
  char bytes[8];
  llvm::support::endian::write64le(bytes, value);
  os.write(bytes, 8);
}

pb_status *pbArtifactSave(const pb_artifact *artifact, const char *path) {
  return guard([&]() -> pb_status * {
    if (!artifact || !path)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbArtifactSave: null artifact or path");
    llvm::SmallString<256> temp;
    int fd;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(
            llvm::Twine(path) + ".tmp-%%%%%%", fd, temp))
      return makeStatus(PB_STATUS_IO_ERROR, llvm::Twine("cannot write '") +
                                                path + "': " + ec.message());
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << kMagic;
      writeU64(os, artifact->metadata.size());
      os << artifact->metadata;
      writeU64(os, artifact->payload.size());
      os << artifact->payload;
      os.close();
      if (os.has_error()) {
        llvm::sys::fs::remove(temp);
        return makeStatus(PB_STATUS_IO_ERROR, llvm::Twine("cannot write '") +
                                                  path +
                                                  "': " + os.error().message());
      }
    }
    if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
      llvm::sys::fs::remove(temp);
      return makeStatus(PB_STATUS_IO_ERROR, llvm::Twine("cannot write '") +
                                                path + "': " + ec.message());
    }
    return nullptr;
  });
}

pb_status *pbArtifactLoad(const char *path, pb_artifact **out) {
  return guard([&]() -> pb_status * {
    if (!path || !out)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbArtifactLoad: null path or output");
    *out = nullptr;
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return makeStatus(PB_STATUS_IO_ERROR,
                        llvm::Twine("cannot read '") + path +
                            "': " + buffer.getError().message());
    llvm::StringRef data = (*buffer)->getBuffer();
    auto corrupt = [&](const char *what) {
      return makeStatus(PB_STATUS_IO_ERROR, llvm::Twine("'") + path +
                                                "' is not a PolyBlocks "
                                                "artifact (" +
                                                what + ")");
    };
    if (!data.consume_front(kMagic))
      return corrupt("bad magic");
    auto readBlock = [&](std::string &into) {
      if (data.size() < 8)
        return false;
      uint64_t size = llvm::support::endian::read64le(data.data());
      data = data.drop_front(8);
      if (data.size() < size)
        return false;
      into = data.take_front(size).str();
      data = data.drop_front(size);
      return true;
    };
    auto artifact = std::make_unique<pb_artifact>();
    if (!readBlock(artifact->metadata))
      return corrupt("truncated metadata");
    if (!readBlock(artifact->payload))
      return corrupt("truncated payload");
    if (!data.empty())
      return corrupt("trailing bytes");
    *out = artifact.release();
    return nullptr;
  });
}
