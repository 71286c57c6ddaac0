//===- CheckInputContract.cpp - Reject input outside the contract ---------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "pb/Transforms/DimArgs.h"
#include "pb/Transforms/InPlace.h"
#include "pb/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBCHECKINPUTCONTRACTPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;

static bool isSupportedElementType(Type type) {
  if (type.isF16() || type.isBF16() || type.isF32() || type.isF64() ||
      type.isIndex())
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isSignless() &&
           llvm::is_contained(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                              integer.getWidth());
  return false;
}

/// Why `type` is outside the contract, or "" when it is inside. Scalars are
/// accepted inside bodies only (`allowScalars`); dynamic dimensions are
/// checked by the caller (checkDimArgs for arguments and results).
static std::string checkType(Type type, bool allowScalars) {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!isSupportedElementType(tensor.getElementType()))
      os << "has element type " << tensor.getElementType()
         << ", which is not supported";
    else if (tensor.getEncoding())
      os << "has a tensor encoding (" << type << "), which is not supported";
    return reason;
  }
  if (allowScalars && isSupportedElementType(type))
    return reason;
  os << "has type " << type << "; only ranked tensors"
     << (allowScalars ? " and scalars" : " and index sizes")
     << " are supported";
  return reason;
}

namespace {
class PBCheckInputContractPass
    : public pb::impl::PBCheckInputContractPassBase<PBCheckInputContractPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    for (Operation &op : module.getBody()->getOperations()) {
      auto func = dyn_cast<func::FuncOp>(op);
      if (!func) {
        op.emitError() << "op '" << op.getName()
                       << "' is outside the input contract: a module holds "
                          "only func.func";
        ok = false;
        continue;
      }
      ok &= checkFunction(func);
    }
    if (!ok)
      signalPassFailure();
  }

private:
  /// Why result `index`'s pb.in_place (pb/Transforms/InPlace.h) is not the
  /// position of a distinct tensor argument of the result's type (with the
  /// same pb.dim_args), or "" (also when absent). `updated` collects the
  /// arguments named so far.
  static std::string checkInPlace(func::FuncOp func, unsigned index,
                                  SmallVector<int64_t> &updated) {
    Attribute attr = func.getResultAttr(index, pb::kInPlaceAttrName);
    if (!attr)
      return "";
    auto position = dyn_cast<IntegerAttr>(attr);
    if (!position || position.getValue().isNegative() ||
        position.getInt() >= func.getNumArguments())
      return "has a pb.in_place that is no argument position";
    int64_t arg = position.getInt();
    if (func.getArgumentTypes()[arg] != func.getResultTypes()[index])
      return llvm::formatv("updates argument {0} (pb.in_place), whose type "
                           "is not the result's",
                           arg)
          .str();
    if (func.getArgAttr(arg, pb::kDimArgsAttrName) !=
        func.getResultAttr(index, pb::kDimArgsAttrName))
      return llvm::formatv("updates argument {0} (pb.in_place), whose sizes "
                           "(pb.dim_args) are not the result's",
                           arg)
          .str();
    if (llvm::is_contained(updated, arg))
      return llvm::formatv("updates argument {0} (pb.in_place), which an "
                           "earlier result updates",
                           arg)
          .str();
    updated.push_back(arg);
    return "";
  }

  bool checkFunction(func::FuncOp func) {
    bool ok = true;
    if (func.isExternal()) {
      func.emitError() << "function '" << func.getName()
                       << "' has no body; external functions are not "
                          "supported";
      return false;
    }
    FunctionType type = func.getFunctionType();
    // Arguments are tensors or `index` sizes; the dynamic dimensions of
    // arguments and results name the sizes that hold them (pb.dim_args).
    for (auto [index, input] : llvm::enumerate(type.getInputs())) {
      std::string reason =
          input.isIndex() ? "" : checkType(input, /*allowScalars=*/false);
      if (reason.empty())
        reason = pb::checkDimArgs(func, input,
                                  func.getArgAttr(index, pb::kDimArgsAttrName));
      if (!reason.empty()) {
        func.emitError() << "argument " << index << " of '" << func.getName()
                         << "' " << reason;
        ok = false;
      }
    }
    SmallVector<int64_t> updated;
    for (auto [index, result] : llvm::enumerate(type.getResults())) {
      std::string reason = checkType(result, /*allowScalars=*/false);
      if (reason.empty())
        reason = pb::checkDimArgs(
            func, result, func.getResultAttr(index, pb::kDimArgsAttrName));
      if (reason.empty())
        reason = checkInPlace(func, index, updated);
      if (!reason.empty()) {
        func.emitError() << "result " << index << " of '" << func.getName()
                         << "' " << reason;
        ok = false;
      }
    }
    func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
      StringRef dialect = op->getName().getDialectNamespace();
      if (!llvm::is_contained(
              ArrayRef<StringRef>{"func", "linalg", "tensor", "arith", "math"},
              dialect)) {
        op->emitError() << "op '" << op->getName()
                        << "' is outside the input contract: only the func, "
                           "linalg, tensor, arith and math dialects are "
                           "accepted";
        ok = false;
        return WalkResult::skip();
      }
      for (Value value : op->getResults()) {
        std::string reason = checkType(value.getType(), /*allowScalars=*/true);
        if (!reason.empty()) {
          op->emitError() << "op '" << op->getName() << "' result " << reason;
          ok = false;
        }
      }
      return WalkResult::advance();
    });
    return ok;
  }
};
} // namespace
