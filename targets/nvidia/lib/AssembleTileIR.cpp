//===- AssembleTileIR.cpp - S5 for Tile IR kernels ------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Tile IR path's S5: each `tileir.module` becomes Tile IR bytecode
// (BytecodeWriter.cpp) and, when NVIDIA's tileiras is found, a cubin for
// the chip's `TileIRPath` GPU name. The payload's module is
//   {"name", "tileir_bytecode_base64", "cubin_base64" (when tileiras ran)}
// and the launches of its kernels take from the cubin the threads of a
// tile block (EIATTR_REQNTID) and its static shared memory.
//
//===----------------------------------------------------------------------===//

#include "pb/NVIDIA/NVIDIABackend.h"

#include "pb/GPU/ExternalTool.h"

#include "pb/TileIR/Bytecode.h"
#include "pb/TileIR/TileIR.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::pb;

extern char **environ;

static LogicalResult reportError(Operation *op, const llvm::Twine &message) {
  return op->emitError() << "S5 (nvidia, tile-ir): " << message;
}

/// `$POLYBLOCKS_TILEIRAS`, else tileiras on PATH, else "".
static std::string findTileiras() {
  if (const char *env = std::getenv("POLYBLOCKS_TILEIRAS"))
    return env;
  if (llvm::ErrorOr<std::string> path =
          llvm::sys::findProgramByName("tileiras"))
    return *path;
  return "";
}

/// What a launch needs from a tileiras cubin.
struct CubinLaunchInfo {
  int64_t threads[3] = {0, 0, 0};
  int64_t staticSharedBytes = 0;
};

/// Reads the kernel's required block size (the `.nv.info.<kernel>`
/// attribute EIATTR_REQNTID: records of a format byte, an attribute byte
/// and a 16-bit value or size) and its static shared memory (the size of
/// `.nv.shared.<kernel>`).
static FailureOr<CubinLaunchInfo>
readCubin(Operation *op, llvm::StringRef cubin, llvm::StringRef kernel) {
  constexpr uint8_t kFormatSizedValue = 0x04, kAttrReqNTid = 0x10;
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(
          llvm::MemoryBufferRef(cubin, kernel));
  if (!object) {
    llvm::consumeError(object.takeError());
    return reportError(op, "tileiras wrote no ELF cubin");
  }
  CubinLaunchInfo info;
  bool found = false;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == (".nv.shared." + kernel).str()) {
      info.staticSharedBytes = static_cast<int64_t>(section.getSize());
      continue;
    }
    if (*name != (".nv.info." + kernel).str())
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    llvm::StringRef bytes = *contents;
    auto u16 = [&](size_t at) {
      return static_cast<unsigned>(static_cast<uint8_t>(bytes[at])) |
             static_cast<unsigned>(static_cast<uint8_t>(bytes[at + 1])) << 8;
    };
    auto u32 = [&](size_t at) { return u16(at) | u16(at + 2) << 16; };
    for (size_t at = 0; at + 4 <= bytes.size();) {
      uint8_t format = bytes[at], attribute = bytes[at + 1];
      unsigned value = u16(at + 2);
      if (format != kFormatSizedValue) {
        at += 4;
        continue;
      }
      if (attribute == kAttrReqNTid && value == 12 && at + 16 <= bytes.size()) {
        for (int i = 0; i < 3; ++i)
          info.threads[i] = u32(at + 4 + 4 * i);
        found = true;
      }
      at += 4 + value;
    }
  }
  if (!found)
    return reportError(op, "the cubin of kernel '" + kernel +
                               "' states no block size (EIATTR_REQNTID)");
  return info;
}

/// Runs tileiras on `bytecode` for `gpuName`. tileiras loads libnvvm from
/// $CUDA_HOME, and another release's libnvvm makes it fail ("failed to
/// compile Tile IR program"): when the toolkit tileiras belongs to (its
/// bin directory's parent, the pip packages' layout) has nvvm/, CUDA_HOME
/// is that toolkit for tileiras.
static LogicalResult assemble(Operation *op, llvm::StringRef tileiras,
                              llvm::StringRef gpuName, llvm::StringRef bytecode,
                              std::string &cubin) {
  llvm::SmallString<128> toolkit =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(tileiras));
  llvm::SmallString<128> nvvm(toolkit);
  llvm::sys::path::append(nvvm, "nvvm");
  bool ownToolkit = !toolkit.empty() && llvm::sys::fs::is_directory(nvvm);
  std::vector<std::string> env;
  for (char **var = environ; var && *var; ++var)
    if (!ownToolkit || !llvm::StringRef(*var).starts_with("CUDA_HOME="))
      env.emplace_back(*var);
  if (ownToolkit)
    env.push_back(("CUDA_HOME=" + toolkit).str());
  SmallVector<llvm::StringRef> envRefs(env.begin(), env.end());
  std::string gpuFlag = ("--gpu-name=" + gpuName).str();
  FailureOr<gpucommon::ToolOutput> run = gpucommon::runExternalTool(
      op, "S5 (nvidia, tile-ir): ", "tileiras", tileiras,
      {tileiras, gpuFlag, "{input}", "-o", "{output}"}, "kernel.tilebc",
      bytecode, "kernel.cubin", "cubin", ArrayRef<llvm::StringRef>(envRefs));
  if (failed(run))
    return failure();
  cubin = std::move(run->output);
  return success();
}

FailureOr<llvm::json::Object>
mlir::pb::nvidia::describeTileIRLaunch(Operation *op, const ChipDesc &chip) {
  auto launch = dyn_cast<tileir::LaunchOp>(op);
  if (!launch || !chip.tileIR)
    return reportError(op, "a kernel launch S5 does not know");
  llvm::json::Array grid;
  for (int64_t extent : launch.getGrid())
    grid.push_back(extent);
  // The block until the cubin tells: the threads the .td expects.
  return llvm::json::Object{
      {"module", launch.getKernel().getRootReference().getValue()},
      {"kernel", launch.getKernel().getLeafReference().getValue()},
      {"grid", std::move(grid)},
      {"block", llvm::json::Array{chip.tileIR->threadsPerTileBlock, 1, 1}},
      {"dynamic_shared_memory_bytes", 0},
      {"static_shared_memory_bytes", 0}};
}

LogicalResult mlir::pb::nvidia::emitTileIRModules(mlir::ModuleOp module,
                                                  const ChipDesc &chip,
                                                  llvm::json::Array &modules,
                                                  llvm::json::Array &entries) {
  SmallVector<tileir::ModuleOp> tileModules =
      llvm::to_vector(module.getOps<tileir::ModuleOp>());
  if (tileModules.empty())
    return success();
  if (!chip.tileIR)
    return reportError(module, "the chip has no Tile IR path");
  // The plan holds the launches now; the kernels' modules go below.
  module.walk([](tileir::LaunchOp launch) { launch.erase(); });
  std::string tileiras = findTileiras();
  for (tileir::ModuleOp tileModule : tileModules) {
    std::string bytecode;
    llvm::raw_string_ostream os(bytecode);
    if (failed(tileir::writeBytecode(tileModule, os)))
      return failure();
    llvm::json::Object description{
        {"name", tileModule.getSymName()},
        {"tileir_bytecode_base64", llvm::encodeBase64(bytecode)}};
    if (!tileiras.empty()) {
      std::string cubin;
      if (failed(assemble(tileModule, tileiras, chip.tileIR->gpuName, bytecode,
                          cubin)))
        return failure();
      // Each launch of the module's kernels takes the cubin's block size
      // and static shared memory.
      for (llvm::json::Value &entry : entries)
        for (llvm::json::Value &value :
             *entry.getAsObject()->getArray("launches")) {
          llvm::json::Object &launch = *value.getAsObject();
          if (launch.getString("module") != tileModule.getSymName())
            continue;
          FailureOr<CubinLaunchInfo> info =
              readCubin(tileModule, cubin, *launch.getString("kernel"));
          if (failed(info))
            return failure();
          launch["block"] = llvm::json::Array{
              info->threads[0], info->threads[1], info->threads[2]};
          launch["static_shared_memory_bytes"] = info->staticSharedBytes;
        }
      description["cubin_base64"] = llvm::encodeBase64(cubin);
    }
    modules.push_back(std::move(description));
    tileModule.erase();
  }
  return success();
}
