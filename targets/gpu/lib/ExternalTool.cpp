//===- ExternalTool.cpp - Running an assembler or linker on one file ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/ExternalTool.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pb;

FailureOr<gpucommon::ToolOutput> gpucommon::runExternalTool(
    Operation *op, llvm::StringRef errorPrefix, llvm::StringRef name,
    llvm::StringRef tool, llvm::ArrayRef<llvm::StringRef> args,
    llvm::StringRef inputName, llvm::StringRef input,
    llvm::StringRef outputName, llvm::StringRef outputKind,
    std::optional<llvm::ArrayRef<llvm::StringRef>> env) {
  auto fail = [&](const llvm::Twine &message) -> FailureOr<ToolOutput> {
    op->emitError() << errorPrefix << message;
    return failure();
  };
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("polyblocks-" + name, dir))
    return fail("cannot create a temporary directory: " + ec.message());
  llvm::SmallString<128> inputPath(dir), outputPath(dir), logPath(dir);
  llvm::sys::path::append(inputPath, inputName);
  llvm::sys::path::append(outputPath, outputName);
  llvm::sys::path::append(logPath, name + ".log");
  llvm::scope_exit cleanup([&] {
    for (llvm::StringRef path :
         {inputPath.str(), outputPath.str(), logPath.str()})
      llvm::sys::fs::remove(path);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(inputPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write " + inputPath + ": " + ec.message());
    os << input;
  }
  llvm::SmallVector<llvm::StringRef> argv;
  for (llvm::StringRef arg : args)
    argv.push_back(arg == "{input}"    ? llvm::StringRef(inputPath)
                   : arg == "{output}" ? llvm::StringRef(outputPath)
                                       : arg);
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(tool, argv, env, redirects, 0, 0, &errMsg);
  ToolOutput result;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    result.log = (*buffer)->getBuffer().str();
  if (rc != 0)
    return fail(name + " (" + tool +
                ") failed: " + (result.log.empty() ? errMsg : result.log));
  auto buffer = llvm::MemoryBuffer::getFile(outputPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read the " + outputKind + " " + name + " wrote");
  result.output = (*buffer)->getBuffer().str();
  return result;
}
