//===- ExternalTool.h - Running an assembler or linker on one file -*- C++
//-*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GPU back ends' S5 hand each kernel module to a tool of the vendor's
// or LLVM's (ptxas, tileiras, ld.lld): one input file in, one output file
// out, a log on failure. runExternalTool does that in a temporary
// directory of its own.
//
//===----------------------------------------------------------------------===//

#ifndef PB_GPU_EXTERNALTOOL_H
#define PB_GPU_EXTERNALTOOL_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::pb::gpucommon {

/// What a tool made of one input: the file it wrote and what it printed.
struct ToolOutput {
  std::string output;
  std::string log;
};

/// Writes `input` to `inputName` in a fresh temporary directory (removed
/// afterwards) and runs `tool` with `args`, in which "{input}" and
/// "{output}" stand for the paths of the input and of `outputName` there;
/// its standard output and error go to its log. The environment is the
/// compiler's, or `env` where given. Errors (a file that cannot be written
/// or read, a nonzero exit status with the tool's log) are reported at
/// `op`, each message after `errorPrefix`, naming the tool as `name` and
/// its output as `outputKind`.
FailureOr<ToolOutput> runExternalTool(
    Operation *op, llvm::StringRef errorPrefix, llvm::StringRef name,
    llvm::StringRef tool, llvm::ArrayRef<llvm::StringRef> args,
    llvm::StringRef inputName, llvm::StringRef input,
    llvm::StringRef outputName, llvm::StringRef outputKind,
    std::optional<llvm::ArrayRef<llvm::StringRef>> env = std::nullopt);

} // namespace mlir::pb::gpucommon

#endif // PB_GPU_EXTERNALTOOL_H
