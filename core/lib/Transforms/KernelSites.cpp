//===- KernelSites.cpp - Work, estimate and profile of each kernel call
//---===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// After pb-outline-kernels, a function's body is a sequence of calls of
// kernels. Each call is a site: this pass counts its work (Roofline.h),
// estimates its time from the chip's per-core figures, records both on the
// module (`pb.kernel_sites`, read by S5 into the artifact's metadata) and,
// when asked to profile, brackets the call with calls of the CPU support
// library that add its wall-clock time to the site's counters.
//
//===----------------------------------------------------------------------===//

#include "pb/Dialect/PBDialect.h"
#include "pb/Transforms/Passes.h"
#include "pb/Transforms/Roofline.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Threading.h"

namespace mlir::pb {
#define GEN_PASS_DEF_PBKERNELSITESPASS
#include "pb/Transforms/Passes.h.inc"
} // namespace mlir::pb

using namespace mlir;
using namespace mlir::pb;

static bool hasParallelLoop(func::FuncOp kernel) {
  return kernel
      .walk([](Operation *op) {
        return isa<scf::ParallelOp, affine::AffineParallelOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {
/// One call's estimate on `cores` cores of a chip whose .td states per-core
/// figures (the CPU targets).
struct CallEstimate {
  double memorySeconds = 0;
  double computeSeconds = 0;
  double overheadSeconds = 0;
  double seconds = 0;
  bool memoryBound = true;
};
} // namespace

/// The .td's per-core figures over the cores the call uses, plus the
/// fork and join of a parallel call.
static FailureOr<CallEstimate> estimateCall(const ChipDesc &chip,
                                            const Work &work, int64_t cores,
                                            bool parallel, std::string &why) {
  FailureOr<RooflineSeconds> parts = getRooflineParts(chip, work, why);
  if (failed(parts))
    return failure();
  double used = parallel ? static_cast<double>(std::max<int64_t>(1, cores)) : 1;
  CallEstimate estimate;
  estimate.computeSeconds = parts->compute / used;
  estimate.memorySeconds = parts->memory / used;
  estimate.overheadSeconds =
      parallel ? static_cast<double>(chip.costModel->launchOverheadNs) * 1e-9
               : 0;
  estimate.memoryBound = estimate.memorySeconds >= estimate.computeSeconds;
  estimate.seconds = std::max(estimate.memorySeconds, estimate.computeSeconds) +
                     estimate.overheadSeconds;
  return estimate;
}

static DictionaryAttr
describeFlops(MLIRContext *ctx,
              llvm::ArrayRef<std::pair<ElementType, double>> flopsByType) {
  SmallVector<NamedAttribute> entries;
  for (auto [type, flops] : flopsByType)
    entries.emplace_back(StringAttr::get(ctx, stringifyElementType(type)),
                         FloatAttr::get(Float64Type::get(ctx), flops));
  return DictionaryAttr::get(ctx, entries);
}

namespace {
class PBKernelSitesPass
    : public pb::impl::PBKernelSitesPassBase<PBKernelSitesPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    const ChipDesc *chip = getTargetChip(module);
    int64_t usedCores = cores;
    if (usedCores <= 0)
      usedCores = std::max(1, llvm::get_physical_cores());

    SymbolTable symbols(module);
    // Each kernel's work and whether it forks, counted once.
    llvm::DenseMap<Operation *, std::pair<Work, bool>> kernels;
    auto getKernel = [&](func::FuncOp kernel) -> std::pair<Work, bool> & {
      auto [it, inserted] = kernels.try_emplace(kernel);
      if (inserted) {
        SmallVector<Operation *> body;
        for (Operation &op : kernel.getBody().front().without_terminator())
          body.push_back(&op);
        it->second = {countWork(body), hasParallelLoop(kernel)};
      }
      return it->second;
    };

    func::FuncOp now, add;
    if (profile) {
      OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
      Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
      now = func::FuncOp::create(builder, module.getLoc(), "__pb_profile_now",
                                 builder.getFunctionType({}, {i64}));
      add = func::FuncOp::create(builder, module.getLoc(), "__pb_profile_add",
                                 builder.getFunctionType({i32, i64}, {}));
      now.setPrivate();
      add.setPrivate();
    }

    SmallVector<Attribute> sites;
    std::string why;
    bool estimated = chip != nullptr;
    for (func::FuncOp function :
         llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (function.isExternal() ||
          function->hasAttr(PBDialect::kKernelAttrName))
        continue;
      SmallVector<func::CallOp> calls;
      function.walk([&](func::CallOp call) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && callee->hasAttr(PBDialect::kKernelAttrName))
          calls.push_back(call);
      });
      for (func::CallOp call : calls) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        auto &[work, parallel] = getKernel(callee);
        int64_t id = static_cast<int64_t>(sites.size());
        Builder b(ctx);
        SmallVector<NamedAttribute> fields = {
            b.getNamedAttr("site", b.getI64IntegerAttr(id)),
            b.getNamedAttr("entry", b.getStringAttr(function.getSymName())),
            b.getNamedAttr("kernel", b.getStringAttr(callee.getSymName())),
            b.getNamedAttr(
                "loc", b.getStringAttr(describeFileLocation(call.getLoc()))),
            b.getNamedAttr("parallel", b.getBoolAttr(parallel)),
            b.getNamedAttr("bytes", b.getF64FloatAttr(work.bytes)),
            b.getNamedAttr("vector_flops",
                           describeFlops(ctx, work.vectorFlops)),
            b.getNamedAttr("matrix_flops",
                           describeFlops(ctx, work.matrixFlops)),
            b.getNamedAttr("work_exact", b.getBoolAttr(work.exact))};
        if (chip) {
          FailureOr<CallEstimate> estimate =
              estimateCall(*chip, work, usedCores, parallel, why);
          if (succeeded(estimate)) {
            fields.push_back(b.getNamedAttr(
                "estimate_us", b.getF64FloatAttr(estimate->seconds * 1e6)));
            fields.push_back(b.getNamedAttr(
                "memory_us", b.getF64FloatAttr(estimate->memorySeconds * 1e6)));
            fields.push_back(b.getNamedAttr(
                "compute_us",
                b.getF64FloatAttr(estimate->computeSeconds * 1e6)));
            fields.push_back(b.getNamedAttr(
                "overhead_us",
                b.getF64FloatAttr(estimate->overheadSeconds * 1e6)));
            fields.push_back(b.getNamedAttr(
                "bound",
                b.getStringAttr(estimate->memoryBound ? "memory" : "compute")));
          } else {
            estimated = false;
          }
        }
        sites.push_back(b.getDictionaryAttr(fields));

        if (profile) {
          OpBuilder builder(call);
          Location loc = call.getLoc();
          Value start = func::CallOp::create(builder, loc, now).getResult(0);
          builder.setInsertionPointAfter(call);
          Value site = arith::ConstantIntOp::create(builder, loc, id, 32);
          func::CallOp::create(builder, loc, add, ValueRange{site, start});
        }
      }
    }

    Builder b(ctx);
    SmallVector<NamedAttribute> record = {
        b.getNamedAttr("sites", b.getArrayAttr(sites)),
        b.getNamedAttr("cores", b.getI64IntegerAttr(usedCores)),
        b.getNamedAttr("profiled", b.getBoolAttr(profile))};
    if (chip)
      record.push_back(b.getNamedAttr("chip", b.getStringAttr(chip->name)));
    if (!estimated)
      record.push_back(b.getNamedAttr(
          "no_estimate",
          b.getStringAttr(chip ? why : "the module has no #pb.target")));
    module->setAttr(PBDialect::kKernelSitesAttrName,
                    b.getDictionaryAttr(record));
    if (!sites.empty())
      pb::explain(module, llvm::Twine(sites.size()) + " kernel calls" +
                              (profile ? ", each timed at run time" : "") +
                              "; estimated with " + llvm::Twine(usedCores) +
                              " cores for a parallel call");
  }
};
} // namespace
