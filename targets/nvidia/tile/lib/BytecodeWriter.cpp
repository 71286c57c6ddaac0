//===- BytecodeWriter.cpp - Tile IR operations to bytecode ----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The encoding follows the CUDA Tile IR specification's bytecode chapter:
// each function's body is a sequence of operations, each an opcode, its
// result types, a flags word where the operation has optional parts, its
// attributes and its operands (value numbers: the function's arguments,
// then each result in order; a region's values are numbered after its
// parent's and the numbers are reused after it). Types, strings and
// constants live in tables referenced by index.
//
//===----------------------------------------------------------------------===//

#include "BytecodeFormat.h"
#include "pb/TileIR/Bytecode.h"
#include "pb/TileIR/TileIR.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/ADT/TypeSwitch.h"
#include <map>

using namespace mlir;
using namespace mlir::pb::tileir;
using namespace mlir::pb::tileir::bytecode;

namespace {

/// A table of encoded items, numbered in order of first use from `first`.
class Table {
public:
  explicit Table(unsigned first = 0) : first(first) {}
  unsigned get(llvm::StringRef bytes) {
    auto [it, inserted] =
        ids.try_emplace(bytes.str(), first + static_cast<unsigned>(ids.size()));
    return it->second;
  }
  size_t size() const { return ids.size(); }
  /// count, padding to `indexBytes`, offsets, data.
  void write(Buffer &out, unsigned indexBytes) const {
    encodeVarint(ids.size(), out);
    padTo(out, indexBytes);
    uint64_t offset = 0;
    for (const auto &entry : ids) {
      appendLittleEndian(offset, indexBytes, out);
      offset += entry.first.size();
    }
    for (const auto &entry : ids)
      out.append(entry.first.begin(), entry.first.end());
  }

private:
  unsigned first;
  llvm::MapVector<std::string, unsigned, std::map<std::string, unsigned>> ids;
};

class Writer {
public:
  Writer() {
    // The format's predefined types: i1 is 0, i32 is 1.
    (void)types.get(llvm::StringRef("\x00", 1));
    (void)types.get(llvm::StringRef("\x03", 1));
  }

  LogicalResult writeFunction(EntryOp entry, Buffer &out);
  void finish(Buffer &functions, unsigned numFunctions, llvm::raw_ostream &os);

private:
  FailureOr<unsigned> typeId(Type type, Location loc);
  LogicalResult writeType(Type type, Buffer &buf, Location loc) {
    FailureOr<unsigned> id = typeId(type, loc);
    if (failed(id))
      return failure();
    encodeVarint(*id, buf);
    return success();
  }
  LogicalResult writeTypes(TypeRange typeRange, Buffer &buf, Location loc) {
    encodeVarint(typeRange.size(), buf);
    for (Type type : typeRange)
      if (failed(writeType(type, buf, loc)))
        return failure();
    return success();
  }
  void writeOperand(Value value, Buffer &buf) {
    encodeVarint(valueIds.lookup(value), buf);
  }
  void writeOperands(ValueRange values, Buffer &buf) {
    encodeVarint(values.size(), buf);
    for (Value v : values)
      writeOperand(v, buf);
  }
  void number(ValueRange values) {
    for (Value v : values)
      valueIds[v] = nextValueId++;
  }
  unsigned stringId(llvm::StringRef s) { return strings.get(s); }

  LogicalResult writeBlock(Block &block, Buffer &buf, unsigned &numOps);
  /// An operation's one region of one block: its argument types, then its
  /// operations (their values numbered after the parent's, the numbers
  /// reused after it).
  LogicalResult writeRegion(Block &body, Buffer &buf, Location loc);
  LogicalResult writeOp(Operation *op, Buffer &buf, unsigned &numOps);

  Table strings, types, constants;
  Table debugAttrs{1};
  std::vector<std::vector<uint64_t>> debugInfo;
  DenseMap<Value, unsigned> valueIds;
  unsigned nextValueId = 0;
};

} // namespace

FailureOr<unsigned> Writer::typeId(Type type, Location loc) {
  Buffer buf;
  if (std::optional<uint8_t> code = getSimpleTypeCode(type)) {
    buf.push_back(static_cast<char>(*code));
    return types.get(llvm::StringRef(buf.data(), buf.size()));
  }
  auto sub = [&](Type t) -> LogicalResult { return writeType(t, buf, loc); };
  LogicalResult ok =
      llvm::TypeSwitch<Type, LogicalResult>(type)
          .Case([&](PointerType t) {
            buf.push_back(kPointerType);
            encodeVarint(0, buf); // optional parts: none
            return sub(t.getPointeeType());
          })
          .Case([&](TileType t) {
            buf.push_back(kTileType);
            if (failed(sub(t.getElementType())))
              return failure();
            encodeIntList(t.getShape(), 8, buf);
            return success();
          })
          .Case([&](TensorViewType t) {
            buf.push_back(kTensorViewType);
            encodeVarint(0, buf);
            if (failed(sub(t.getElementType())))
              return failure();
            encodeIntList(t.getShape(), 8, buf);
            encodeIntList(t.getStrides(), 8, buf);
            return success();
          })
          .Case([&](PartitionViewType t) {
            buf.push_back(kPartitionViewType);
            std::optional<PaddingValue> padding = t.getPaddingValue();
            encodeVarint(padding ? 1 : 0, buf); // optional parts
            encodeIntList(t.getTileShape(), 4, buf);
            if (failed(sub(t.getTensorView())))
              return failure();
            encodeIntList(t.getDimMap(), 4, buf);
            if (padding)
              buf.push_back(static_cast<char>(*padding));
            return success();
          })
          .Case([&](FunctionType t) {
            buf.push_back(kFunctionType);
            for (TypeRange range :
                 {TypeRange(t.getInputs()), TypeRange(t.getResults())}) {
              encodeVarint(range.size(), buf);
              for (Type e : range)
                if (failed(sub(e)))
                  return failure();
            }
            return success();
          })
          .Default([&](Type t) {
            return emitError(loc) << "Tile IR bytecode has no encoding for "
                                     "type "
                                  << t;
          });
  if (failed(ok))
    return failure();
  return types.get(llvm::StringRef(buf.data(), buf.size()));
}

/// The constant's elements in the format's byte order: one element for a
/// splat, else all (i1 as one byte each).
static FailureOr<Buffer> getConstantBytes(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitOpError("only dense constants have a bytecode encoding");
  Type elementType = dense.getElementType();
  unsigned bytes =
      std::max<unsigned>(1, elementType.getIntOrFloatBitWidth() / 8);
  Buffer out;
  auto append = [&](const APInt &bits) {
    appendLittleEndian(bits.getZExtValue(), bytes, out);
  };
  if (isa<FloatType>(elementType)) {
    if (dense.isSplat())
      append(dense.getSplatValue<APFloat>().bitcastToAPInt());
    else
      for (const APFloat &v : dense.getValues<APFloat>())
        append(v.bitcastToAPInt());
  } else {
    if (dense.isSplat())
      append(dense.getSplatValue<APInt>());
    else
      for (const APInt &v : dense.getValues<APInt>())
        append(v);
  }
  return out;
}

LogicalResult Writer::writeBlock(Block &block, Buffer &buf, unsigned &numOps) {
  for (Operation &op : block)
    if (failed(writeOp(&op, buf, numOps)))
      return failure();
  return success();
}

LogicalResult Writer::writeRegion(Block &body, Buffer &buf, Location loc) {
  encodeVarint(1, buf); // one region
  buf.push_back(1);     // of one block
  if (failed(writeTypes(body.getArgumentTypes(), buf, loc)))
    return failure();
  unsigned saved = nextValueId;
  number(body.getArguments());
  Buffer inner;
  unsigned innerOps = 0;
  if (failed(writeBlock(body, inner, innerOps)))
    return failure();
  encodeVarint(innerOps, buf);
  buf.append(inner.begin(), inner.end());
  nextValueId = saved;
  return success();
}

LogicalResult Writer::writeOp(Operation *op, Buffer &buf, unsigned &numOps) {
  Location loc = op->getLoc();
  ++numOps;
  debugInfo.back().push_back(0); // no debug attribute
  auto resultType = [&] {
    return writeType(op->getResult(0).getType(), buf, loc);
  };
  auto roundingMode = [&](RoundingMode mode) {
    buf.push_back(static_cast<char>(mode));
  };
  auto opcode = [&](Opcode code) { encodeVarint(code, buf); };

  // Float arithmetic: result type, flags (flush to zero: never), rounding,
  // operands.
  auto binary = [&](Opcode code) {
    opcode(code);
    if (failed(resultType()))
      return failure();
    encodeVarint(0, buf);
    roundingMode(RoundingMode::nearest_even);
    writeOperand(op->getOperand(0), buf);
    writeOperand(op->getOperand(1), buf);
    number(op->getResults());
    return success();
  };
  auto minMax = [&](Opcode code, bool propagateNaN) {
    opcode(code);
    if (failed(resultType()))
      return failure();
    encodeVarint(propagateNaN ? 1 : 0, buf); // no flush to zero
    writeOperand(op->getOperand(0), buf);
    writeOperand(op->getOperand(1), buf);
    number(op->getResults());
    return success();
  };
  // Unary operations: result type, then the parts `prefix` writes.
  auto unary = [&](Opcode code, llvm::function_ref<void()> prefix) {
    opcode(code);
    if (failed(resultType()))
      return failure();
    prefix();
    writeOperand(op->getOperand(0), buf);
    number(op->getResults());
    return success();
  };
  auto none = [] {};
  auto viewAccess = [&](Opcode code, TypeRange results, Value tile, Value view,
                        ValueRange index, Value token) {
    opcode(code);
    if (failed(writeTypes(results, buf, loc)))
      return failure();
    encodeVarint(token ? 4 : 0, buf); // flags: token present
    buf.push_back(0);                 // weak ordering
    encodeVarint(index.size(), buf);  // in bounds: not known, each index
    for (size_t i = 0; i < index.size(); ++i)
      buf.push_back(0);
    if (tile)
      writeOperand(tile, buf);
    writeOperand(view, buf);
    writeOperands(index, buf);
    if (token)
      writeOperand(token, buf);
    number(op->getResults());
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MakeTokenOp) {
        opcode(kMakeToken);
        if (failed(resultType()))
          return failure();
        number(op->getResults());
        return success();
      })
      .Case([&](ConstantOp c) {
        FailureOr<Buffer> data = getConstantBytes(c);
        if (failed(data))
          return failure();
        opcode(kConstant);
        if (failed(resultType()))
          return failure();
        Buffer item;
        encodeVarint(data->size(), item);
        item.append(data->begin(), data->end());
        encodeVarint(constants.get(llvm::StringRef(item.data(), item.size())),
                     buf);
        number(op->getResults());
        return success();
      })
      .Case<GetTileBlockIdOp, GetNumTileBlocksOp>([&](Operation *) {
        opcode(isa<GetTileBlockIdOp>(op) ? kGetTileBlockId : kGetNumTileBlocks);
        for (Type t : op->getResultTypes())
          if (failed(writeType(t, buf, loc)))
            return failure();
        number(op->getResults());
        return success();
      })
      .Case([&](MakeTensorViewOp v) {
        opcode(kMakeTensorView);
        if (failed(writeTypes(op->getResultTypes(), buf, loc)))
          return failure();
        writeOperand(v.getBase(), buf);
        encodeVarint(0, buf); // no dynamic extents
        encodeVarint(0, buf); // no dynamic strides
        number(op->getResults());
        return success();
      })
      .Case([&](MakePartitionViewOp v) {
        opcode(kMakePartitionView);
        if (failed(resultType()))
          return failure();
        writeOperand(v.getTensorView(), buf);
        number(op->getResults());
        return success();
      })
      .Case([&](LoadViewTkoOp l) {
        return viewAccess(kLoadViewTko, op->getResultTypes(), Value(),
                          l.getView(), l.getIndex(), l.getToken());
      })
      .Case([&](StoreViewTkoOp s) {
        return viewAccess(kStoreViewTko, op->getResultTypes(), s.getTile(),
                          s.getView(), s.getIndex(), s.getToken());
      })
      .Case([&](MmaFOp m) {
        opcode(kMmaF);
        if (failed(resultType()))
          return failure();
        encodeVarint(0, buf); // no fast accumulation
        writeOperand(m.getLhs(), buf);
        writeOperand(m.getRhs(), buf);
        writeOperand(m.getAcc(), buf);
        number(op->getResults());
        return success();
      })
      .Case([&](ForOp f) {
        opcode(kFor);
        if (failed(writeTypes(op->getResultTypes(), buf, loc)))
          return failure();
        encodeVarint(0, buf); // signed comparison
        encodeVarint(op->getNumOperands(), buf);
        for (Value v : op->getOperands())
          writeOperand(v, buf);
        if (failed(writeRegion(f.getBody().front(), buf, loc)))
          return failure();
        number(op->getResults());
        return success();
      })
      .Case([&](ReduceOp r) {
        opcode(kReduce);
        if (failed(writeTypes(op->getResultTypes(), buf, loc)))
          return failure();
        encodeVarint(r.getDim(), buf);
        // The identities: self-describing float attributes (tag, type, the
        // bits as a zigzag varint; one byte for 8-bit types).
        encodeVarint(r.getIdentities().size(), buf);
        for (Attribute attr : r.getIdentities()) {
          auto identity = cast<FloatAttr>(attr);
          buf.push_back(kFloatAttrTag);
          if (failed(writeType(identity.getType(), buf, loc)))
            return failure();
          APInt bits = identity.getValue().bitcastToAPInt();
          if (bits.getBitWidth() > 32)
            return LogicalResult(
                r.emitOpError("has a 64-bit identity: not encoded here"));
          if (bits.getBitWidth() <= 8)
            buf.push_back(static_cast<char>(bits.getZExtValue()));
          else
            encodeVarint(bits.getZExtValue() << 1, buf);
        }
        writeOperands(r.getOperands(), buf);
        if (failed(writeRegion(r.getBody().front(), buf, loc)))
          return failure();
        number(op->getResults());
        return success();
      })
      .Case([&](IotaOp) {
        opcode(kIota);
        if (failed(resultType()))
          return failure();
        number(op->getResults());
        return success();
      })
      .Case([&](CmpIOp c) {
        opcode(kCmpI);
        if (failed(resultType()))
          return failure();
        buf.push_back(static_cast<char>(c.getComparisonPredicate()));
        buf.push_back(1); // signed
        writeOperand(c.getLhs(), buf);
        writeOperand(c.getRhs(), buf);
        number(op->getResults());
        return success();
      })
      .Case([&](LogOp) { return unary(kLog, none); })
      .Case<ContinueOp, ReturnOp, YieldOp>([&](Operation *) {
        opcode(isa<ContinueOp>(op) ? kContinue
               : isa<ReturnOp>(op) ? kReturn
                                   : kYield);
        encodeVarint(0, buf); // no results
        writeOperands(op->getOperands(), buf);
        return success();
      })
      .Case([&](AddFOp) { return binary(kAddF); })
      .Case([&](SubFOp) { return binary(kSubF); })
      .Case([&](MulFOp) { return binary(kMulF); })
      .Case([&](DivFOp) { return binary(kDivF); })
      .Case([&](MaxFOp m) { return minMax(kMaxF, m.getPropagateNan()); })
      .Case([&](MinFOp m) { return minMax(kMinF, m.getPropagateNan()); })
      .Case([&](NegFOp) { return unary(kNegF, none); })
      .Case([&](AbsFOp) { return unary(kAbsF, none); })
      .Case([&](FmaOp f) {
        opcode(kFma);
        if (failed(resultType()))
          return failure();
        encodeVarint(0, buf); // no flush to zero
        roundingMode(RoundingMode::nearest_even);
        writeOperand(f.getLhs(), buf);
        writeOperand(f.getRhs(), buf);
        writeOperand(f.getAcc(), buf);
        number(op->getResults());
        return success();
      })
      .Case([&](CmpFOp c) {
        opcode(kCmpF);
        if (failed(resultType()))
          return failure();
        buf.push_back(static_cast<char>(c.getComparisonPredicate()));
        buf.push_back(static_cast<char>(c.getComparisonOrdering()));
        writeOperand(c.getLhs(), buf);
        writeOperand(c.getRhs(), buf);
        number(op->getResults());
        return success();
      })
      .Case<AddIOp, MulIOp>([&](Operation *) {
        opcode(isa<AddIOp>(op) ? kAddI : kMulI);
        if (failed(resultType()))
          return failure();
        buf.push_back(0); // no overflow assumed
        writeOperand(op->getOperand(0), buf);
        writeOperand(op->getOperand(1), buf);
        number(op->getResults());
        return success();
      })
      .Case<DivIOp, RemIOp>([&](Operation *) {
        bool div = isa<DivIOp>(op);
        opcode(div ? kDivI : kRemI);
        if (failed(resultType()))
          return failure();
        buf.push_back(1); // signed
        if (div)
          roundingMode(RoundingMode::zero);
        writeOperand(op->getOperand(0), buf);
        writeOperand(op->getOperand(1), buf);
        number(op->getResults());
        return success();
      })
      .Case<OffsetOp, SelectOp>([&](Operation *) {
        opcode(isa<OffsetOp>(op) ? kOffset : kSelect);
        if (failed(resultType()))
          return failure();
        for (Value v : op->getOperands())
          writeOperand(v, buf);
        number(op->getResults());
        return success();
      })
      .Case([&](ExpOp) {
        return unary(kExp, [&] { roundingMode(RoundingMode::full); });
      })
      .Case([&](TanHOp) {
        return unary(kTanH, [&] { roundingMode(RoundingMode::full); });
      })
      .Case([&](SqrtOp) {
        return unary(kSqrt, [&] {
          encodeVarint(0, buf);
          roundingMode(RoundingMode::nearest_even);
        });
      })
      .Case(
          [&](RsqrtOp) { return unary(kRsqrt, [&] { encodeVarint(0, buf); }); })
      .Case([&](FToFOp) {
        return unary(kFToF, [&] { roundingMode(RoundingMode::nearest_even); });
      })
      .Case([&](BroadcastOp) { return unary(kBroadcast, none); })
      .Case([&](ReshapeOp) { return unary(kReshape, none); })
      .Default([&](Operation *) {
        return op->emitOpError("has no Tile IR bytecode encoding");
      });
}

LogicalResult Writer::writeFunction(EntryOp entry, Buffer &out) {
  Location loc = entry.getLoc();
  encodeVarint(stringId(entry.getSymName()), out);
  if (failed(writeType(entry.getFunctionType(), out, loc)))
    return failure();
  out.push_back(kFunctionIsEntry);
  debugInfo.push_back({0}); // the function's own debug attribute: none
  encodeVarint(debugInfo.size(), out);

  valueIds.clear();
  nextValueId = 0;
  Block &body = entry.getBody().front();
  number(body.getArguments());
  Buffer ops;
  unsigned numOps = 0;
  if (failed(writeBlock(body, ops, numOps)))
    return failure();
  encodeVarint(ops.size(), out);
  out.append(ops.begin(), ops.end());
  return success();
}

void Writer::finish(Buffer &functions, unsigned numFunctions,
                    llvm::raw_ostream &os) {
  Buffer out;
  out.append(kMagic, kMagic + sizeof(kMagic));
  out.push_back(static_cast<char>(kBytecodeVersion.major));
  out.push_back(static_cast<char>(kBytecodeVersion.minor));
  appendLittleEndian(kBytecodeVersion.tag, 2, out);

  Buffer section;
  encodeVarint(numFunctions, section);
  section.append(functions.begin(), functions.end());
  writeSection(kFuncSection, 8, section, out);

  section.clear();
  constants.write(section, 8);
  writeSection(kConstantSection, 8, section, out);

  // Debug information: one attribute index per function and operation, all
  // "none"; the table holds one unused entry (readers reject an empty one).
  section.clear();
  encodeVarint(debugInfo.size(), section);
  padTo(section, 4);
  uint64_t index = 0;
  for (const auto &ids : debugInfo) {
    appendLittleEndian(index, 4, section);
    index += ids.size();
  }
  encodeVarint(index, section);
  padTo(section, 8);
  for (const auto &ids : debugInfo)
    for (uint64_t id : ids)
      appendLittleEndian(id, 8, section);
  Table attrs(1);
  (void)attrs.get(llvm::StringRef("\x00", 1));
  attrs.write(section, 4);
  writeSection(kDebugSection, 8, section, out);

  section.clear();
  types.write(section, 4);
  writeSection(kTypeSection, 4, section, out);

  section.clear();
  strings.write(section, 4);
  writeSection(kStringSection, 4, section, out);

  out.push_back(kEndOfBytecode);
  os.write(out.data(), out.size());
}

LogicalResult mlir::pb::tileir::writeBytecode(Operation *container,
                                              llvm::raw_ostream &os) {
  if (container->getNumRegions() != 1 || !container->getRegion(0).hasOneBlock())
    return container->emitOpError("holds no single block of Tile IR kernels");
  Writer writer;
  Buffer functions;
  unsigned numFunctions = 0;
  for (Operation &op : container->getRegion(0).front()) {
    auto entry = dyn_cast<EntryOp>(op);
    if (!entry)
      continue;
    if (failed(writer.writeFunction(entry, functions)))
      return failure();
    ++numFunctions;
  }
  if (numFunctions == 0)
    return container->emitOpError("holds no tileir.entry");
  writer.finish(functions, numFunctions, os);
  return success();
}
