//===- TileIR.td - The CUDA Tile IR dialect ----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// PolyBlocks' own model of NVIDIA's CUDA Tile IR (the subset the Tile IR
// back end emits), written from the public specification: types and
// operations mirror the specification's names, so that the printed form
// reads like `tileirdisasm`'s and every operation has one bytecode encoding
// (TileIRBytecode.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PB_TILEIR_TD
#define PB_TILEIR_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

def TileIR_Dialect : Dialect {
  let name = "tileir";
  let cppNamespace = "::mlir::pb::tileir";
  let summary = "CUDA Tile IR: tile kernels for NVIDIA's tileiras";
  let description = [{
    Kernels over tiles (multi-dimensional values with static power-of-two
    shapes), global memory reached through tensor views and partition views,
    memory operations ordered by tokens. The Tile IR back end
    (`--codegen=tile-ir`) emits it, TileIRBytecode.cpp writes it as the
    bytecode that `tileiras` assembles, and the tile interpreter runs it on
    the CPU. docs/TileIR.md.
  }];
  let useDefaultTypePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def TileIR_PaddingValue : I32EnumAttr<"PaddingValue",
    "what a partition view's loads read past the tensor's extent", [
    I32EnumAttrCase<"zero", 0>, I32EnumAttrCase<"neg_zero", 1>,
    I32EnumAttrCase<"nan", 2>, I32EnumAttrCase<"pos_inf", 3>,
    I32EnumAttrCase<"neg_inf", 4>]> {
  let cppNamespace = "::mlir::pb::tileir";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class TileIR_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<TileIR_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def TileIR_PointerType : TileIR_Type<"Pointer", "ptr"> {
  let summary = "a pointer to global memory of one element type";
  let parameters = (ins "Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
}

def TileIR_TokenType : TileIR_Type<"Token", "token"> {
  let summary = "orders memory operations";
}

def TileIR_TileType : TileIR_Type<"Tile", "tile"> {
  let summary = "a tile: a static shape (each extent a power of two; rank 0 "
                "is a scalar) of integers, floats or pointers";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const {
      int64_t n = 1;
      for (int64_t d : getShape())
        n *= d;
      return n;
    }
  }];
}

def TileIR_TensorViewType : TileIR_Type<"TensorView", "tensor_view"> {
  let summary = "a strided tensor in global memory (static shape and "
                "strides in elements)";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType,
                        ArrayRefParameter<"int64_t">:$strides);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def TileIR_PartitionViewType : TileIR_Type<"PartitionView", "partition_view"> {
  let summary = "a tensor view cut into a grid of tiles of one shape; "
                "loads past the tensor's extent read the padding value "
                "(undefined without one), stores there write nothing";
  let parameters = (ins ArrayRefParameter<"int64_t">:$tileShape,
                        "TensorViewType":$tensorView,
                        ArrayRefParameter<"int64_t">:$dimMap,
                        OptionalParameter<"std::optional<PaddingValue>">:$paddingValue);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The tile shape each load reads: the tile shape itself.
    TileType getTileType() const {
      return TileType::get(getContext(), getTileShape(),
                           getTensorView().getElementType());
    }
  }];
}

def TileIR_AnyTile : Type<CPred<"::llvm::isa<::mlir::pb::tileir::TileType>($_self)">,
                          "tile", "::mlir::pb::tileir::TileType">;
def TileIR_ScalarI32 : Type<CPred<[{
    ::llvm::isa<::mlir::pb::tileir::TileType>($_self) &&
    ::llvm::cast<::mlir::pb::tileir::TileType>($_self).getRank() == 0 &&
    ::llvm::cast<::mlir::pb::tileir::TileType>($_self).getElementType()
        .isSignlessInteger(32)}]>, "tile<i32>", "::mlir::pb::tileir::TileType">,
    BuildableType<"::mlir::pb::tileir::TileType::get($_builder.getContext(), "
                  "{}, $_builder.getI32Type())">;
def TileIR_Token : Type<CPred<"::llvm::isa<::mlir::pb::tileir::TokenType>($_self)">,
                        "token", "::mlir::pb::tileir::TokenType">,
    BuildableType<"::mlir::pb::tileir::TokenType::get($_builder.getContext())">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def TileIR_RoundingMode : I32EnumAttr<"RoundingMode", "rounding mode", [
    I32EnumAttrCase<"nearest_even", 0>, I32EnumAttrCase<"zero", 1>,
    I32EnumAttrCase<"negative_inf", 2>, I32EnumAttrCase<"positive_inf", 3>,
    I32EnumAttrCase<"approx", 4>, I32EnumAttrCase<"full", 5>]> {
  let cppNamespace = "::mlir::pb::tileir";
}

def TileIR_ComparisonOrdering : I32EnumAttr<"ComparisonOrdering",
    "whether a comparison with NaN is false (ordered) or true (unordered)", [
    I32EnumAttrCase<"unordered", 0>, I32EnumAttrCase<"ordered", 1>]> {
  let cppNamespace = "::mlir::pb::tileir";
}

def TileIR_ComparisonPredicate : I32EnumAttr<"ComparisonPredicate",
    "comparison predicate", [
    I32EnumAttrCase<"equal", 0>, I32EnumAttrCase<"not_equal", 1>,
    I32EnumAttrCase<"less_than", 2>, I32EnumAttrCase<"less_than_or_equal", 3>,
    I32EnumAttrCase<"greater_than", 4>,
    I32EnumAttrCase<"greater_than_or_equal", 5>]> {
  let cppNamespace = "::mlir::pb::tileir";
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

class TileIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileIR_Dialect, mnemonic, traits>;

def TileIR_ModuleOp : TileIR_Op<"module", [IsolatedFromAbove,
    NoRegionArguments, NoTerminator, SingleBlock, SymbolTable, Symbol]> {
  let summary = "the kernels of one bytecode module (one tileiras run, one "
                "cubin)";
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "StringRef":$name)>];
}

def TileIR_LaunchOp : TileIR_Op<"launch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "host side: runs a kernel over a grid of tile blocks, its "
                "pointer arguments the buffers' base addresses";
  let description = [{
    The Tile IR back end's counterpart of `gpu.launch_func`: S5 turns it
    into a launch of the plan (the tile block's threads come from the
    cubin tileiras wrote).
  }];
  let arguments = (ins SymbolRefAttr:$kernel, DenseI64ArrayAttr:$grid,
                       Variadic<AnyMemRef>:$args);
  let assemblyFormat = [{
    $kernel `grid` $grid `args` `(` $args `)` attr-dict `:` type($args)
  }];
  let hasVerifier = 1;
}

def TileIR_EntryOp : TileIR_Op<"entry", [
    FunctionOpInterface, IsolatedFromAbove, Symbol]> {
  let summary = "a kernel: its arguments are scalar tiles (pointers or "
                "numbers), it returns nothing";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ArrayRef<Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ArrayRef<Type> getResultTypes() { return getFunctionType().getResults(); }
    Region *getCallableRegion() { return &getBody(); }
  }];
}

def TileIR_ReturnOp : TileIR_Op<"return", [Pure, Terminator,
    HasParent<"EntryOp">]> {
  let summary = "ends a kernel";
  let assemblyFormat = "attr-dict";
}

def TileIR_ConstantOp : TileIR_Op<"constant", [Pure]> {
  let summary = "a tile of constant values (a splat or dense elements)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TileIR_MakeTokenOp : TileIR_Op<"make_token", [Pure]> {
  let summary = "a fresh token";
  let results = (outs TileIR_Token:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def TileIR_GetTileBlockIdOp : TileIR_Op<"get_tile_block_id", [Pure,
    AllTypesMatch<["x", "y", "z"]>]> {
  let summary = "this tile block's coordinates in the grid";
  let results = (outs TileIR_ScalarI32:$x, TileIR_ScalarI32:$y,
                      TileIR_ScalarI32:$z);
  let assemblyFormat = "attr-dict `:` type($x)";
}

def TileIR_GetNumTileBlocksOp : TileIR_Op<"get_num_tile_blocks", [Pure,
    AllTypesMatch<["x", "y", "z"]>]> {
  let summary = "the grid's extents";
  let results = (outs TileIR_ScalarI32:$x, TileIR_ScalarI32:$y,
                      TileIR_ScalarI32:$z);
  let assemblyFormat = "attr-dict `:` type($x)";
}

def TileIR_MakeTensorViewOp : TileIR_Op<"make_tensor_view", [Pure]> {
  let summary = "a tensor view of global memory at a pointer (static shape "
                "and strides, from the result type)";
  let arguments = (ins TileIR_AnyTile:$base);
  let results = (outs TileIR_TensorViewType:$result);
  let assemblyFormat = "$base attr-dict `:` type($base) `->` type($result)";
  let hasVerifier = 1;
}

def TileIR_MakePartitionViewOp : TileIR_Op<"make_partition_view", [Pure]> {
  let summary = "a tensor view cut into tiles";
  let arguments = (ins TileIR_TensorViewType:$tensor_view);
  let results = (outs TileIR_PartitionViewType:$result);
  let assemblyFormat = [{
    $tensor_view attr-dict `:` type($tensor_view) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileIR_LoadViewTkoOp : TileIR_Op<"load_view_tko", [AttrSizedOperandSegments]> {
  let summary = "loads the tile at a grid index of a partition view "
                "(weak ordering, after the token)";
  let arguments = (ins TileIR_PartitionViewType:$view,
                       Variadic<TileIR_ScalarI32>:$index,
                       Optional<TileIR_Token>:$token);
  let results = (outs TileIR_AnyTile:$result, TileIR_Token:$result_token);
  let assemblyFormat = [{
    $view `[` $index `]` (`token` `=` $token^)? attr-dict `:` type($view)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileIR_StoreViewTkoOp : TileIR_Op<"store_view_tko", [AttrSizedOperandSegments]> {
  let summary = "stores a tile at a grid index of a partition view";
  let arguments = (ins TileIR_AnyTile:$tile, TileIR_PartitionViewType:$view,
                       Variadic<TileIR_ScalarI32>:$index,
                       Optional<TileIR_Token>:$token);
  let results = (outs TileIR_Token:$result_token);
  let assemblyFormat = [{
    $tile `,` $view `[` $index `]` (`token` `=` $token^)? attr-dict `:`
    type($tile) `,` type($view)
  }];
  let hasVerifier = 1;
}

def TileIR_MmaFOp : TileIR_Op<"mmaf", [Pure,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "acc + lhs x rhs on tiles (MxK, KxN, MxN; the tensor "
                "cores' types: f16/bf16 with f16 or f32 accumulation, tf32 "
                "and f64)";
  let arguments = (ins TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs,
                       TileIR_AnyTile:$acc);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,`
    type($acc)
  }];
  let hasVerifier = 1;
}

def TileIR_ForOp : TileIR_Op<"for", [
    SingleBlockImplicitTerminator<"ContinueOp">,
    RecursiveMemoryEffects]> {
  let summary = "a counted loop (lower bound, upper bound, step; signed "
                "i32) carrying values";
  let arguments = (ins TileIR_ScalarI32:$lowerBound,
                       TileIR_ScalarI32:$upperBound, TileIR_ScalarI32:$step,
                       Variadic<AnyType>:$initValues);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "Value":$lowerBound, "Value":$upperBound,
                                 "Value":$step, "ValueRange":$initValues)>];
  let extraClassDeclaration = [{
    Value getInductionVar() { return getBody().front().getArgument(0); }
    Block::BlockArgListType getRegionIterArgs() {
      return getBody().front().getArguments().drop_front();
    }
  }];
}

def TileIR_ContinueOp : TileIR_Op<"continue", [Pure, Terminator,
    HasParent<"ForOp">]> {
  let summary = "the values the next iteration (or the loop's results) "
                "receive";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ }]>];
  let assemblyFormat = "($operands^ `:` type($operands))? attr-dict";
}

class TileIR_UnaryFOp<string mnemonic> : TileIR_Op<mnemonic,
    [Pure, SameOperandsAndResultType]> {
  let arguments = (ins TileIR_AnyTile:$source);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$source attr-dict `:` type($result)";
}

class TileIR_BinaryFOp<string mnemonic> : TileIR_Op<mnemonic,
    [Pure, SameOperandsAndResultType]> {
  let arguments = (ins TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def TileIR_AddFOp : TileIR_BinaryFOp<"addf"> { let summary = "lhs + rhs"; }
def TileIR_AddIOp : TileIR_BinaryFOp<"addi"> {
  let summary = "lhs + rhs on signed integers (no overflow assumed)";
}
def TileIR_MulIOp : TileIR_BinaryFOp<"muli"> {
  let summary = "lhs * rhs on signed integers (no overflow assumed)";
}
def TileIR_DivIOp : TileIR_BinaryFOp<"divi"> {
  let summary = "lhs / rhs on signed integers, rounded toward zero";
}
def TileIR_RemIOp : TileIR_BinaryFOp<"remi"> {
  let summary = "the remainder of divi (the sign of lhs)";
}
def TileIR_SubFOp : TileIR_BinaryFOp<"subf"> { let summary = "lhs - rhs"; }
def TileIR_MulFOp : TileIR_BinaryFOp<"mulf"> { let summary = "lhs * rhs"; }
def TileIR_DivFOp : TileIR_BinaryFOp<"divf"> {
  let summary = "lhs / rhs (IEEE, rounded to nearest even)";
}
class TileIR_MinMaxFOp<string mnemonic> : TileIR_Op<mnemonic,
    [Pure, SameOperandsAndResultType]> {
  let arguments = (ins TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs,
                       UnitAttr:$propagate_nan);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}
def TileIR_MaxFOp : TileIR_MinMaxFOp<"maxf"> {
  let summary = "the larger; with propagate_nan NaN if either is NaN, else "
                "the other operand (maxnum)";
}
def TileIR_MinFOp : TileIR_MinMaxFOp<"minf"> {
  let summary = "the smaller; with propagate_nan NaN if either is NaN, "
                "else the other operand (minnum)";
}
def TileIR_NegFOp : TileIR_UnaryFOp<"negf"> { let summary = "-x"; }
def TileIR_ExpOp : TileIR_UnaryFOp<"exp"> { let summary = "e^x"; }
def TileIR_TanHOp : TileIR_UnaryFOp<"tanh"> { let summary = "tanh(x)"; }
def TileIR_SqrtOp : TileIR_UnaryFOp<"sqrt"> { let summary = "sqrt(x)"; }
def TileIR_RsqrtOp : TileIR_UnaryFOp<"rsqrt"> { let summary = "1/sqrt(x)"; }

def TileIR_AbsFOp : TileIR_UnaryFOp<"absf"> { let summary = "|x|"; }

def TileIR_FmaOp : TileIR_Op<"fma", [Pure, SameOperandsAndResultType]> {
  let summary = "lhs * rhs + acc, rounded once";
  let arguments = (ins TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs,
                       TileIR_AnyTile:$acc);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $acc attr-dict `:` type($result)";
}

def TileIR_CmpFOp : TileIR_Op<"cmpf", [Pure, SameTypeOperands]> {
  let summary = "compares floats elementwise into an i1 tile of their shape";
  let arguments = (ins TileIR_ComparisonPredicate:$comparison_predicate,
                       TileIR_ComparisonOrdering:$comparison_ordering,
                       TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = [{
    $comparison_predicate $comparison_ordering $lhs `,` $rhs attr-dict `:`
    type($lhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileIR_SelectOp : TileIR_Op<"select", [Pure,
    AllTypesMatch<["val_if_true", "val_if_false", "result"]>]> {
  let summary = "elementwise cond ? val_if_true : val_if_false";
  let arguments = (ins TileIR_AnyTile:$cond, TileIR_AnyTile:$val_if_true,
                       TileIR_AnyTile:$val_if_false);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = [{
    $cond `,` $val_if_true `,` $val_if_false attr-dict `:` type($cond) `,`
    type($result)
  }];
  let hasVerifier = 1;
}

def TileIR_OffsetOp : TileIR_Op<"offset", [Pure,
    AllTypesMatch<["ptr", "result"]>]> {
  let summary = "pointers advanced by integer offsets (in elements of the "
                "pointee type)";
  let arguments = (ins TileIR_AnyTile:$ptr, TileIR_AnyTile:$offset);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = [{
    $ptr `,` $offset attr-dict `:` type($ptr) `,` type($offset)
  }];
  let hasVerifier = 1;
}

def TileIR_FToFOp : TileIR_Op<"ftof", [Pure]> {
  let summary = "converts a float tile to another float type (rounded to "
                "nearest even)";
  let arguments = (ins TileIR_AnyTile:$source);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def TileIR_BroadcastOp : TileIR_Op<"broadcast", [Pure]> {
  let summary = "repeats a tile along its extents of 1 (same rank)";
  let arguments = (ins TileIR_AnyTile:$source);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def TileIR_ReshapeOp : TileIR_Op<"reshape", [Pure]> {
  let summary = "the same elements in row-major order, another shape";
  let arguments = (ins TileIR_AnyTile:$source);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def TileIR_CmpIOp : TileIR_Op<"cmpi", [Pure, SameTypeOperands]> {
  let summary = "compares signed integers elementwise into an i1 tile of "
                "their shape";
  let arguments = (ins TileIR_ComparisonPredicate:$comparison_predicate,
                       TileIR_AnyTile:$lhs, TileIR_AnyTile:$rhs);
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = [{
    $comparison_predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def TileIR_IotaOp : TileIR_Op<"iota", [Pure]> {
  let summary = "the 1-d integer tile 0, 1, 2, ...";
  let results = (outs TileIR_AnyTile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TileIR_ReduceOp : TileIR_Op<"reduce", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "folds tiles along one dimension with the region's "
                "combiner";
  let description = [{
    Each operand is folded along `dim` (the result drops that dimension).
    The region combines two rank-0 tiles of each operand's element type
    (all the left values, then all the right ones) and yields their
    combination; `identities` are the combiner's neutral elements, one per
    operand. The order of the folds is tileiras' own (a tree): a sum is
    reassociated.
  }];
  let arguments = (ins Variadic<TileIR_AnyTile>:$operands, I32Attr:$dim,
                       ArrayAttr:$identities);
  let results = (outs Variadic<TileIR_AnyTile>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $operands `dim` `=` $dim `identities` `=` $identities attr-dict `:`
    type($operands) `->` type($results) $body
  }];
  let hasVerifier = 1;
}

def TileIR_YieldOp : TileIR_Op<"yield", [Pure, Terminator,
    HasParent<"ReduceOp">]> {
  let summary = "the combined values of a reduce's region";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ }]>];
  let assemblyFormat = "($operands^ `:` type($operands))? attr-dict";
}

def TileIR_LogOp : TileIR_UnaryFOp<"log"> { let summary = "ln(x)"; }

#endif // PB_TILEIR_TD
