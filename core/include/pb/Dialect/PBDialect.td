//===- PBDialect.td - The pb dialect -----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PB_DIALECT_PBDIALECT_TD
#define PB_DIALECT_PBDIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def PB_Dialect : Dialect {
  let name = "pb";
  let cppNamespace = "::mlir::pb";
  let summary = "PolyBlocks: target description and target-neutral kernels";
  let description = [{
    The `pb` dialect carries what the target-neutral optimizer needs beyond
    upstream dialects: the target a module is compiled for
    (`#pb.target<"nvidia-sm90">`, attached to the module as `pb.target`).
    Passes learn the target only through that attribute and the tables
    generated from the chips' .td files.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute holding the target.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "pb.target";
    /// Name of the loop attribute naming the compute level a parallel loop
    /// maps to (set by pb-mark-parallel, read by S4).
    static constexpr ::llvm::StringLiteral kLevelAttrName = "pb.level";
    /// Unit attribute on an affine.for whose iterations are independent,
    /// proven before a transformation (tiling) made that harder to see, or
    /// by construction (set by pb-tile and pb-promote-to-scratchpad, read by
    /// pb-mark-parallel and pb-gpu-prepare-parallel).
    static constexpr ::llvm::StringLiteral kParallelAttrName = "pb.parallel";
    /// String attribute on a linalg contraction naming the target's matrix
    /// unit that S4 lowers it onto (set by pb-map-matrix-units for
    /// subgroup-scope units, read by the target's S4).
    static constexpr ::llvm::StringLiteral kMatrixUnitAttrName =
        "pb.matrix_unit";
    /// Unit attribute on the elementwise linalg.generic right after a
    /// tagged contraction that S4 fuses into the contraction's stores.
    static constexpr ::llvm::StringLiteral kMatrixUnitEpilogueAttrName =
        "pb.matrix_unit_epilogue";
    /// Integer attribute on the linalg ops of one row kernel (the same
    /// value on each): reductions along the innermost dimension and the
    /// elementwise ops over the same rows, kept whole as linalg ops for a
    /// target that generates tile-level code (set by pb-group-row-kernels,
    /// read by the target's S4; pb/Transforms/RowKernels.h).
    static constexpr ::llvm::StringLiteral kRowKernelAttrName =
        "pb.row_kernel";
    /// Unit attribute on a buffer allocation that holds a copy of a tile in
    /// the target's scratchpad level (set by pb-promote-to-scratchpad; GPU
    /// S4 places every block-level buffer in shared memory).
    static constexpr ::llvm::StringLiteral kScratchpadAttrName =
        "pb.scratchpad";
    /// Unit attribute on a data-movement linalg.generic (a transpose) whose
    /// result layout is wanted: S1's elementwise fusion and layout
    /// propagation leave it alone (set by pb-conv-to-channels-last on a
    /// depthwise filter, so that its channels are contiguous).
    static constexpr ::llvm::StringLiteral kKeepLayoutAttrName =
        "pb.keep_layout";
    /// Unit attribute on a host-side operation that launches a kernel a
    /// back end built in its own IR (the Tile IR path's `tileir.launch`):
    /// the GPU mapping leaves it in place, the launch estimate and plan
    /// count it among the launches.
    static constexpr ::llvm::StringLiteral kKernelLaunchAttrName =
        "pb.kernel_launch";
    /// Dictionary attribute on a GPU launch: the work of the statement it
    /// runs (bytes, FLOPs per unit and type; pb/Transforms/Roofline.h), set
    /// by the launch-building passes of S4.
    static constexpr ::llvm::StringLiteral kWorkAttrName = "pb.work";
    /// Array attribute on an entry function: the `pb.work` of its launches
    /// in order, kept past kernel outlining for S5's estimate.
    static constexpr ::llvm::StringLiteral kLaunchWorkAttrName =
        "pb.launch_work";
    /// String attribute on a GPU kernel module: the module's own MLIR text
    /// as it was before the lowering to the vendor's LLVM dialect, which S5
    /// puts into the payload for running the kernels in an emulator.
    static constexpr ::llvm::StringLiteral kEmulationIRAttrName =
        "pb.emulation_ir";
    /// Unit attribute on a function that pb-outline-kernels made of a loop
    /// nest (a kernel).
    static constexpr ::llvm::StringLiteral kKernelAttrName = "pb.kernel";
    /// Dictionary attribute on a module: pb-kernel-sites' record of every
    /// kernel call (work and estimate), which the CPU's S5 puts into the
    /// artifact's metadata.
    static constexpr ::llvm::StringLiteral kKernelSitesAttrName =
        "pb.kernel_sites";
  }];
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def PB_TargetAttr : AttrDef<PB_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the chip a module is compiled for";
  let description = [{
    Names a registered target (`pb-opt --list-targets`). The verifier
    rejects unknown names. Host-resolved names such as `cpu-host` are
    accepted and resolved against the running CPU when a pass asks for the
    chip; `pb-attach-target` writes the resolved chip instead.

    ```mlir
    module attributes {pb.target = #pb.target<"nvidia-sm90">} {}
    ```
  }];
  let parameters = (ins StringRefParameter<"registered target name">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The chip this attribute names, resolved for the running machine when
    /// the name is host-resolved; null if it cannot be resolved.
    const ::mlir::pb::ChipDesc *getChip() const;
  }];
}

#endif // PB_DIALECT_PBDIALECT_TD
