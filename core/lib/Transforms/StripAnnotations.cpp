//===- StripAnnotations.cpp - Remove pb attributes
//-------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/Passes.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBSTRIPANNOTATIONSPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

namespace {
class PBStripAnnotationsPass
    : public pb::impl::PBStripAnnotationsPassBase<PBStripAnnotationsPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    StringRef prefix = pb::PBDialect::getDialectNamespace();
    getOperation()->walk([&](Operation *op) {
      SmallVector<StringAttr> names;
      for (NamedAttribute attr : op->getDiscardableAttrs())
        if (attr.getName().getValue().starts_with((prefix + ".").str()) &&
            !llvm::is_contained(keep, attr.getName().getValue()))
          names.push_back(attr.getName());
      for (StringAttr name : names)
        op->removeDiscardableAttr(name);
    });
  }
};
} // namespace
