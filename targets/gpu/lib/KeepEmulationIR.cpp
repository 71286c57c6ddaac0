//===- KeepEmulationIR.cpp - Kernel modules' IR for the emulator ----------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The runtime can run a GPU artifact's kernels on the CPU
// (pbExecutableLoadEmulated). PTX or an AMDGPU code object is the wrong
// level for that: after NVVM or ROCDL lowering, ldmatrix, mma.sync, wgmma
// and MFMA are inline PTX strings or intrinsics whose operand layouts an
// emulator would have to re-derive. The gpu.module just before that
// lowering still states them as nvgpu, nvvm and amdgpu operations, so S4
// prints it here and S5 carries the text in the payload.
//
// The text must parse on its own: it is printed in custom form with every
// elements attribute in full (whatever --mlir-elide-elementsattrs-if-larger
// says), without locations, and in local scope, which prints attributes
// inline instead of referring to aliases defined outside the module.
// Resource blobs (dense_resource) are printed only with a top-level
// operation, so a module that holds some is printed from a copy in which
// they are dense elements. Upstream's nvgpu.device_async_create_group
// prints nothing after an empty token list (a group committed after copies
// that all sit in scf.if regions), so that the parser reads the next line's
// result as a token: a module with one is printed in generic form.
//
//===----------------------------------------------------------------------===//

#include "pb/GPU/GPUCommon.h"

#include "pb/Dialect/PBDialect.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OperationSupport.h"

#include <limits>

namespace mlir::pb::gpucommon {
#define GEN_PASS_DEF_PBGPUKEEPEMULATIONIRPASS
#include "pb/GPU/Passes.h.inc"
} // namespace mlir::pb::gpucommon

using namespace mlir;
using namespace mlir::pb;

/// The dense elements a dense_resource attribute holds, or nullopt when its
/// blob is missing or not a valid buffer of its type.
static std::optional<Attribute>
getDenseElements(DenseResourceElementsAttr attr) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(attr.getType(), data, splat))
    return std::nullopt;
  return DenseElementsAttr::getFromRawBuffer(attr.getType(), data);
}

static bool hasDenseResources(Operation *root) {
  bool found = false;
  root->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs())
      attr.getValue().walk([&](DenseResourceElementsAttr) { found = true; });
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

namespace {
class PBGPUKeepEmulationIRPass
    : public gpucommon::impl::PBGPUKeepEmulationIRPassBase<
          PBGPUKeepEmulationIRPass> {
public:
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    // A second run records the module as it is now, without the first
    // run's text inside it.
    module->removeAttr(PBDialect::kEmulationIRAttrName);

    bool generic = false;
    module.walk([&](nvgpu::DeviceAsyncCreateGroupOp group) {
      generic |= group.getInputTokens().empty();
    });
    OpPrintingFlags flags;
    flags.enableDebugInfo(false)
        .printGenericOpForm(generic)
        .useLocalScope()
        .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max());
    std::string text;
    llvm::raw_string_ostream os(text);
    if (hasDenseResources(module)) {
      OwningOpRef<gpu::GPUModuleOp> copy = module.clone();
      AttrTypeReplacer replacer;
      replacer.addReplacement(getDenseElements);
      replacer.recursivelyReplaceElementsIn(*copy, /*replaceAttrs=*/true,
                                            /*replaceLocs=*/false,
                                            /*replaceTypes=*/false);
      copy->print(os, flags);
    } else {
      module->print(os, flags);
    }
    module->setAttr(PBDialect::kEmulationIRAttrName,
                    StringAttr::get(&getContext(), text));
  }
};
} // namespace
