//===- Artifact.cpp - Artifact files
//---------------------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An artifact file (format version 2) is
//   "PBARTIF2"                 7 bytes of magic, then the format version as
//                              one ASCII digit
//   u64 metadata size, then the metadata (JSON)
//   u64 payload size, then the payload (the code, e.g. an ELF shared object)
//   32 bytes: SHA-256 of every byte before it
// with sizes little-endian. Loading checks the magic, the version, the
// length and the digest before it reads any size, metadata or code, and then
// the metadata's schema (Metadata.cpp): a flipped bit or a truncation is an
// error, never code that runs. The digest detects damage, it does not
// authenticate: an artifact is as trusted as the file it comes from.
// Files are written through pb::OutputFile: a regular file through a
// temporary file and a rename, so that a reader never sees a partial
// artifact; a device or a FIFO (`-o /dev/null`) in place, never replaced.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "pb/Support/OutputFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::pb::runtime;

static constexpr llvm::StringLiteral kMagic = "PBARTIF";
static constexpr char kFormatVersion = '2';
static constexpr size_t kHeaderBytes = 8; // magic and version
static constexpr size_t kDigestBytes = 32;

const char *pbArtifactGetMetadata(const pb_artifact *artifact) {
  return artifact ? artifact->metadata.c_str() : "";
}

void pbArtifactDestroy(pb_artifact *artifact) { delete artifact; }

static void appendU64(std::string &out, uint64_t value) {
  char bytes[8];
  llvm::support::endian::write64le(bytes, value);
  out.append(bytes, 8);
}

static std::array<uint8_t, kDigestBytes> digest(llvm::StringRef bytes) {
  return llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
}

pb_status *pbArtifactSave(const pb_artifact *artifact, const char *path) {
  return guard([&]() -> pb_status * {
    if (!artifact || !path)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbArtifactSave: null artifact or path");
    std::string bytes;
    bytes.reserve(kHeaderBytes + 16 + artifact->metadata.size() +
                  artifact->payload.size() + kDigestBytes);
    bytes += kMagic;
    bytes += kFormatVersion;
    appendU64(bytes, artifact->metadata.size());
    bytes += artifact->metadata;
    appendU64(bytes, artifact->payload.size());
    bytes += artifact->payload;
    std::array<uint8_t, kDigestBytes> sum = digest(bytes);
    bytes.append(reinterpret_cast<const char *>(sum.data()), sum.size());

    // A regular file is replaced at once (temporary file + rename); a
    // device or a FIFO is written in place (pb/Support/OutputFile.h).
    if (llvm::Error error = mlir::pb::writeOutputFile(path, bytes))
      return makeStatus(PB_STATUS_IO_ERROR, llvm::toString(std::move(error)));
    return nullptr;
  });
}

pb_status *mlir::pb::runtime::parseArtifact(llvm::StringRef data,
                                            llvm::StringRef name,
                                            std::unique_ptr<pb_artifact> &out) {
  auto invalid = [&](const llvm::Twine &what) {
    return makeStatus(PB_STATUS_INVALID_ARTIFACT,
                      "'" + name +
                          "' is not a valid PolyBlocks artifact: " + what);
  };
  if (data.size() < kHeaderBytes || !data.starts_with(kMagic))
    return invalid("it does not start with the artifact magic 'PBARTIF'");
  char version = data[kMagic.size()];
  if (version != kFormatVersion)
    return invalid(llvm::Twine("its format version is ") +
                   (llvm::isPrint(version) ? llvm::Twine(version)
                                           : llvm::Twine("unknown")) +
                   ", this runtime reads version " +
                   llvm::Twine(kFormatVersion) + "; compile it again");
  if (data.size() < kHeaderBytes + 16 + kDigestBytes)
    return invalid("it is truncated (" + llvm::Twine(data.size()) + " bytes)");
  llvm::StringRef body = data.drop_back(kDigestBytes);
  std::array<uint8_t, kDigestBytes> sum = digest(body);
  if (llvm::arrayRefFromStringRef(data.take_back(kDigestBytes)) !=
      llvm::ArrayRef<uint8_t>(sum))
    return invalid("its SHA-256 digest does not match its contents (the file "
                   "is damaged or truncated)");

  // The digest matched: the sizes are those written, but are checked all
  // the same, so that no read goes past the data.
  body = body.drop_front(kHeaderBytes);
  auto readBlock = [&](std::string &into) {
    if (body.size() < 8)
      return false;
    uint64_t size = llvm::support::endian::read64le(body.data());
    body = body.drop_front(8);
    if (body.size() < size)
      return false;
    into = body.take_front(size).str();
    body = body.drop_front(size);
    return true;
  };
  auto artifact = std::make_unique<pb_artifact>();
  if (!readBlock(artifact->metadata))
    return invalid("its metadata size exceeds the file");
  if (!readBlock(artifact->payload))
    return invalid("its payload size exceeds the file");
  if (!body.empty())
    return invalid("it has bytes after its payload");
  std::string why;
  if (!checkMetadata(artifact->metadata, why))
    return invalid("its metadata " + why);
  out = std::move(artifact);
  return nullptr;
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
    std::unique_ptr<pb_artifact> artifact;
    if (pb_status *status =
            parseArtifact((*buffer)->getBuffer(), path, artifact))
      return status;
    *out = artifact.release();
    return nullptr;
  });
}

pb_status *pbArtifactLoadFromMemory(const void *data, size_t size,
                                    pb_artifact **out) {
  return guard([&]() -> pb_status * {
    if ((!data && size) || !out)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbArtifactLoadFromMemory: null data or output");
    *out = nullptr;
    std::unique_ptr<pb_artifact> artifact;
    if (pb_status *status = parseArtifact(
            llvm::StringRef(static_cast<const char *>(data), size), "<memory>",
            artifact))
      return status;
    *out = artifact.release();
    return nullptr;
  });
}
