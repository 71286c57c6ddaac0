//===- MatrixOps.cpp - ldmatrix and mma.sync over a warp ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The warp-collective matrix operations, computed from the register
// fragments the PTX ISA defines (section numbers of PTX ISA 8.x, "Parallel
// Thread Execution ISA", chapter 9.7.14 "Warp Level Matrix Multiply-
// Accumulate Instructions"), and the glue that gives wgmma.mma_async
// (Wgmma.cpp) its operands.
//
//===----------------------------------------------------------------------===//

#include "MatrixOps.h"
#include "EmulatorInternal.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::pb::emulator;

//===----------------------------------------------------------------------===//
// ldmatrix (9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix")
//===----------------------------------------------------------------------===//

// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: matrix i (of 1, 2
// or 4) is 8 rows of 8 16-bit elements; threads 8i .. 8i+7 give the
// addresses of its rows 0..7 (each 16 bytes, 16-byte aligned). Every thread
// receives one 32-bit register per matrix: without .trans, lane l holds
// row l/4, elements 2 (l%4) and 2 (l%4) + 1 of it; with .trans, the matrix
// is transposed on the way, so lane l holds elements (2 (l%4), l/4) and
// (2 (l%4) + 1, l/4) (row, column) of the matrix as stored.
void mlir::pb::emulator::runLdmatrix(BlockRun &block, const Instr &instr,
                                     ArrayRef<Thread *> lanes) {
  unsigned numTiles = instr.aux;
  bool transpose = instr.aux2;
  if (lanes.size() != 32)
    fail(*lanes[0], "ldmatrix issued by a warp of " +
                        llvm::Twine(lanes.size()) + " threads, not 32");
  // Row r of matrix i as 8 16-bit elements.
  uint16_t rows[4][8][8];
  for (unsigned i = 0; i < numTiles; ++i)
    for (unsigned r = 0; r < 8; ++r) {
      Thread &thread = *lanes[8 * i + r];
      const MemRefValue &memref = *thread.slots[instr.operands[0]].memref;
      SmallVector<int64_t, 4> indices;
      for (unsigned k = 1; k < instr.operands.size(); ++k)
        indices.push_back(int64_t(thread.slots[instr.operands[k]].lanes[0]));
      if (memref.allocation->space != Space::Shared)
        fail(thread, "ldmatrix from memory that is not shared");
      char *address = getAddress(thread, memref, indices, 8, "ldmatrix row");
      checkAccess(thread, memref, address, 16, /*write=*/false, 16,
                  "ldmatrix row");
      std::memcpy(rows[i][r], address, 16);
    }
  for (unsigned l = 0; l < 32; ++l) {
    SmallVector<uint64_t, 8> result;
    unsigned group = l / 4, pair = 2 * (l % 4);
    for (unsigned i = 0; i < numTiles; ++i)
      for (unsigned e = 0; e < 2; ++e)
        result.push_back(transpose ? rows[i][pair + e][group]
                                   : rows[i][group][pair + e]);
    lanes[l]->slots[instr.results[0]].lanes.assign(result.begin(),
                                                   result.end());
  }
  (void)block;
}

//===----------------------------------------------------------------------===//
// mma.sync (9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating
// point type", 9.7.14.5.7 "... mma.m16n8k8")
//===----------------------------------------------------------------------===//

namespace {
/// Where element i of a thread's fragment lies in its matrix.
struct Position {
  unsigned row, column;
};
} // namespace

// In the fragments below, groupID = lane / 4 and threadID_in_group =
// lane % 4, as the ISA names them.

/// A (M x K, row-major) of m16n8k16 for .f16/.bf16: a0..a7.
static Position fragmentA16x16(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  unsigned row = (i == 2 || i == 3 || i == 6 || i == 7) ? group + 8 : group;
  unsigned column = inGroup * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, column};
}
/// B (K x N, column-major) of m16n8k16 for .f16/.bf16: b0..b3.
static Position fragmentB16x8(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {inGroup * 2 + (i & 1) + (i >= 2 ? 8 : 0), group};
}
/// A of m16n8k8 for .f16/.bf16: a0..a3.
static Position fragmentA16x8(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {i >= 2 ? group + 8 : group, inGroup * 2 + (i & 1)};
}
/// B of m16n8k8 for .f16/.bf16: b0, b1.
static Position fragmentB8x8(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {inGroup * 2 + (i & 1), group};
}
/// A of m16n8k8 for .tf32: a0..a3.
static Position fragmentATf32(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {(i == 1 || i == 3) ? group + 8 : group, inGroup + (i >= 2 ? 4 : 0)};
}
/// B of m16n8k8 for .tf32: b0, b1.
static Position fragmentBTf32(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {inGroup + (i == 1 ? 4 : 0), group};
}
/// C and D (M x N) of m16n8k*, f32: c0..c3.
static Position fragmentC(unsigned lane, unsigned i) {
  unsigned group = lane / 4, inGroup = lane % 4;
  return {i >= 2 ? group + 8 : group, inGroup * 2 + (i & 1)};
}

/// The elements of a thread's operand registers, split into `bits`-wide
/// parts (32-bit registers that hold two 16-bit elements are split, low
/// half first, as the ISA packs them).
static SmallVector<uint64_t, 8> getElements(Thread &thread, const Instr &instr,
                                            unsigned first, unsigned count,
                                            unsigned bits) {
  SmallVector<uint64_t, 8> elements;
  for (unsigned o = first; o < first + count; ++o) {
    mlir::Value value = instr.op->getOperand(o);
    Type elementType = getElementTypeOrSelf(value.getType());
    unsigned width = elementType.getIntOrFloatBitWidth();
    for (uint64_t lane : thread.slots[instr.operands[o]].lanes) {
      if (width == bits) {
        elements.push_back(lane);
        continue;
      }
      for (unsigned part = 0; part < width / bits; ++part)
        elements.push_back((lane >> (part * bits)) & ((1ull << bits) - 1));
    }
  }
  return elements;
}

float mlir::pb::emulator::matrixElementToFloat(uint64_t bits, MatrixType type) {
  switch (type) {
  case MatrixType::F16:
    return halfToFloat(bits);
  case MatrixType::BF16:
    return bfloatToFloat(bits);
  case MatrixType::TF32: {
    // tf32: the low 13 mantissa bits are not read.
    uint32_t b = uint32_t(bits) & 0xffffe000u;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case MatrixType::F32: {
    uint32_t b = bits;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  }
  return 0;
}

void mlir::pb::emulator::runMmaSync(BlockRun &block, const Instr &instr,
                                    ArrayRef<Thread *> lanes) {
  (void)block;
  if (lanes.size() != 32)
    fail(*lanes[0], "mma.sync issued by a warp of " +
                        llvm::Twine(lanes.size()) + " threads, not 32");
  unsigned m = instr.positions[0], n = instr.positions[1],
           k = instr.positions[2];
  MatrixType type;
  unsigned countA = 1, countB = 1, countC = 1, firstB = 1, firstC = 2;
  if (instr.code == OpCode::NvvmMmaSync) {
    switch (NVVM::MMATypes(instr.aux)) {
    case NVVM::MMATypes::bf16:
      type = MatrixType::BF16;
      break;
    case NVVM::MMATypes::tf32:
      type = MatrixType::TF32;
      break;
    default:
      type = MatrixType::F16;
    }
    countA = instr.positions[3];
    countB = instr.positions[4];
    countC = instr.positions[5];
    firstB = countA;
    firstC = countA + countB;
  } else {
    Type elementA = getElementTypeOrSelf(instr.op->getOperand(0).getType());
    type = elementA.isF16()    ? MatrixType::F16
           : elementA.isBF16() ? MatrixType::BF16
                               : MatrixType::TF32;
  }
  if (m != 16 || n != 8 || (k != 16 && k != 8) ||
      (type == MatrixType::TF32 && k != 8))
    fail(*lanes[0], "mma.sync of shape m" + llvm::Twine(m) + "n" +
                        llvm::Twine(n) + "k" + llvm::Twine(k) +
                        " is not emulated");
  unsigned bits = type == MatrixType::TF32 ? 32 : 16;
  Position (*positionA)(unsigned, unsigned) = type == MatrixType::TF32
                                                  ? fragmentATf32
                                              : k == 16 ? fragmentA16x16
                                                        : fragmentA16x8;
  Position (*positionB)(unsigned, unsigned) = type == MatrixType::TF32
                                                  ? fragmentBTf32
                                              : k == 16 ? fragmentB16x8
                                                        : fragmentB8x8;
  // Gather A, B and C from the fragments of the 32 lanes.
  float a[16][16], b[16][8], c[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    Thread &thread = *lanes[l];
    SmallVector<uint64_t, 8> elementsA =
        getElements(thread, instr, 0, countA, bits);
    SmallVector<uint64_t, 8> elementsB =
        getElements(thread, instr, firstB, countB, bits);
    SmallVector<uint64_t, 8> elementsC =
        getElements(thread, instr, firstC, countC, 32);
    if (elementsA.size() != m * k / 32 || elementsB.size() != k * n / 32 ||
        elementsC.size() != m * n / 32)
      fail(thread,
           "mma.sync operands of the wrong size for m16n8k" + llvm::Twine(k));
    for (unsigned i = 0; i < elementsA.size(); ++i) {
      Position p = positionA(l, i);
      a[p.row][p.column] = matrixElementToFloat(elementsA[i], type);
    }
    for (unsigned i = 0; i < elementsB.size(); ++i) {
      Position p = positionB(l, i);
      b[p.row][p.column] = matrixElementToFloat(elementsB[i], type);
    }
    for (unsigned i = 0; i < elementsC.size(); ++i) {
      Position p = fragmentC(l, i);
      c[p.row][p.column] = matrixElementToFloat(elementsC[i], MatrixType::F32);
    }
  }
  // D = A x B + C: exact products, summed in double, rounded once to f32.
  float d[16][8];
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < n; ++j) {
      double sum = c[i][j];
      for (unsigned p = 0; p < k; ++p)
        sum += double(a[i][p]) * double(b[p][j]);
      d[i][j] = float(sum);
    }
  for (unsigned l = 0; l < 32; ++l) {
    SmallVector<uint64_t, 4> result;
    for (unsigned i = 0; i < 4; ++i) {
      Position p = fragmentC(l, i);
      uint32_t out;
      std::memcpy(&out, &d[p.row][p.column], 4);
      result.push_back(out);
    }
    lanes[l]->slots[instr.results[0]].lanes.assign(result.begin(),
                                                   result.end());
  }
}

//===----------------------------------------------------------------------===//
// amdgpu.mfma
//===----------------------------------------------------------------------===//

/// amdgpu.mfma of one block, M = N, on a wavefront of 64 lanes: D = A x B +
/// C. With G = 64 / M lane groups and P = K / G elements per lane (AMD's
/// matrix instruction calculator, e.g. v_mfma_f32_32x32x8f16 and
/// v_mfma_f32_16x16x16f16 of the CDNA ISA guides): lane l holds
/// A[l % M][(l / M) * P + i] and B[(l / N) * P + i][l % N] for i < P, and
/// element j of C and D is [(j / 4) * 4G + (l / N) * 4 + j % 4][l % N].
void mlir::pb::emulator::runMfma(BlockRun &block, const Instr &instr,
                                 ArrayRef<Thread *> lanes) {
  (void)block;
  if (lanes.size() != 64)
    fail(*lanes[0], "amdgpu.mfma issued by a wavefront of " +
                        llvm::Twine(lanes.size()) + " lanes, not 64");
  unsigned m = instr.positions[0], n = instr.positions[1],
           k = instr.positions[2];
  if (m != n || 64 % m || (m * k) % 64)
    fail(*lanes[0], "amdgpu.mfma of shape " + llvm::Twine(m) + "x" +
                        llvm::Twine(n) + "x" + llvm::Twine(k) +
                        " is not emulated");
  unsigned groups = 64 / m, perLane = k / groups, accPerLane = m * n / 64;
  Type elementA = getElementTypeOrSelf(instr.op->getOperand(0).getType());
  MatrixType type = elementA.isF16()    ? MatrixType::F16
                    : elementA.isBF16() ? MatrixType::BF16
                                        : MatrixType::F32;
  unsigned bits = type == MatrixType::F32 ? 32 : 16;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  auto cRow = [&](unsigned l, unsigned j) {
    return (j / 4) * 4 * groups + (l / n) * 4 + j % 4;
  };
  for (unsigned l = 0; l < 64; ++l) {
    Thread &thread = *lanes[l];
    SmallVector<uint64_t, 8> elementsA = getElements(thread, instr, 0, 1, bits);
    SmallVector<uint64_t, 8> elementsB = getElements(thread, instr, 1, 1, bits);
    SmallVector<uint64_t, 8> elementsC = getElements(thread, instr, 2, 1, 32);
    if (elementsA.size() != perLane || elementsB.size() != perLane ||
        elementsC.size() != accPerLane)
      fail(thread, "amdgpu.mfma operands of the wrong size for " +
                       llvm::Twine(m) + "x" + llvm::Twine(n) + "x" +
                       llvm::Twine(k));
    for (unsigned i = 0; i < perLane; ++i) {
      a[(l % m) * k + (l / m) * perLane + i] =
          matrixElementToFloat(elementsA[i], type);
      b[((l / n) * perLane + i) * n + l % n] =
          matrixElementToFloat(elementsB[i], type);
    }
    for (unsigned j = 0; j < accPerLane; ++j)
      c[cRow(l, j) * n + l % n] =
          matrixElementToFloat(elementsC[j], MatrixType::F32);
  }
  // D = A x B + C: exact products, summed in double, rounded once to f32.
  for (unsigned l = 0; l < 64; ++l) {
    SmallVector<uint64_t, 16> result;
    for (unsigned j = 0; j < accPerLane; ++j) {
      unsigned row = cRow(l, j), column = l % n;
      double sum = c[row * n + column];
      for (unsigned p = 0; p < k; ++p)
        sum += double(a[row * k + p]) * double(b[p * n + column]);
      float d = float(sum);
      uint32_t out;
      std::memcpy(&out, &d, 4);
      result.push_back(out);
    }
    lanes[l]->slots[instr.results[0]].lanes.assign(result.begin(),
                                                   result.end());
  }
}

//===----------------------------------------------------------------------===//
// wgmma.mma_async: operands for Wgmma.cpp
//===----------------------------------------------------------------------===//

void mlir::pb::emulator::runWgmma(BlockRun &block, const Instr &instr,
                                  ArrayRef<Thread *> threads) {
  auto op = cast<NVVM::WgmmaMmaAsyncOp>(instr.op);
  if (threads.size() != 128)
    fail(*threads[0], "wgmma.mma_async issued by a warpgroup of " +
                          llvm::Twine(threads.size()) + " threads, not 128");
  // The descriptors must be the same in every thread of the warpgroup.
  uint64_t descA = threads[0]->slots[instr.operands[0]].lanes[0];
  uint64_t descB = threads[0]->slots[instr.operands[1]].lanes[0];
  for (Thread *thread : threads)
    if (thread->slots[instr.operands[0]].lanes[0] != descA ||
        thread->slots[instr.operands[1]].lanes[0] != descB)
      fail(*thread, "wgmma.mma_async with matrix descriptors that differ "
                    "between the threads of the warpgroup");
  MatrixType type;
  switch (op.getTypeA()) {
  case NVVM::WGMMATypes::f16:
    type = MatrixType::F16;
    break;
  case NVVM::WGMMATypes::bf16:
    type = MatrixType::BF16;
    break;
  case NVVM::WGMMATypes::tf32:
    type = MatrixType::TF32;
    break;
  default:
    fail(*threads[0], "wgmma.mma_async of an input type not emulated");
  }
  if (op.getTypeB() != op.getTypeA() ||
      op.getTypeD() != NVVM::WGMMATypes::f32 ||
      op.getScaleA() != NVVM::WGMMAScaleIn::one ||
      op.getScaleB() != NVVM::WGMMAScaleIn::one)
    fail(*threads[0], "wgmma.mma_async with a D type, B type or scale not "
                      "emulated");
  // NVVM's layouts: A row (K-major) is imm-trans-a 0, B col (K-major) is
  // imm-trans-b 0.
  bool transA = op.getLayoutA() == NVVM::MMALayout::col;
  bool transB = op.getLayoutB() == NVVM::MMALayout::row;
  bool scaleD = op.getScaleD() == NVVM::WGMMAScaleOut::one;
  NVVM::MMAShapeAttr shape = op.getShape();

  Thread &first = *threads[0];
  WgmmaReads reads;
  SharedReader read = [&](uint64_t address, unsigned bytes, void *out) {
    int64_t offset = int64_t(address) - int64_t(block.sharedWindowBase);
    int64_t size = block.shared.end - block.shared.begin;
    if (offset < 0 || offset + bytes > size)
      fail(first, "wgmma.mma_async reads shared memory out of bounds: " +
                      llvm::Twine(bytes) + " bytes at shared address " +
                      llvm::Twine(address) + " (the block has " +
                      llvm::Twine(size) + " bytes from address " +
                      llvm::Twine(block.sharedWindowBase) + ")");
    MemRefValue whole;
    whole.data = block.shared.begin;
    whole.elementBytes = 1;
    whole.allocation = &block.shared;
    checkAccess(first, whole, block.shared.begin + offset, bytes,
                /*write=*/false, 1, "wgmma.mma_async operand");
    // wgmma reads through the async proxy: what threads wrote through the
    // generic proxy (st.shared, cp.async) must be fenced by its writer
    // (fence.proxy.async) before (PTX ISA 9.7.15.3 "Async Proxy").
    for (size_t i = offset; i < size_t(offset) + bytes; ++i) {
      const ShadowByte &shadow = block.shadow[i];
      if (shadow.writeEpoch >= block.firstEpoch &&
          block.threads[shadow.writer].proxyFences <= shadow.writeFence)
        fail(first,
             "wgmma.mma_async reads shared address " +
                 llvm::formatv("{0:x}", block.sharedWindowBase + i).str() +
                 ", written by thread " + llvm::Twine(shadow.writer) +
                 " with no fence.proxy.async by that thread after the "
                 "write");
    }
    reads.ranges.push_back({size_t(offset), bytes});
    std::memcpy(out, block.shared.begin + offset, bytes);
    return true;
  };
  std::vector<SmallVector<uint64_t, 64>> accumulators;
  for (Thread *thread : threads) {
    const auto &lanes = thread->slots[instr.operands[2]].lanes;
    accumulators.emplace_back(lanes.begin(), lanes.end());
  }
  std::string error;
  if (!wgmma(shape.getN(), shape.getK(), type, transA, transB, descA, descB,
             scaleD, read, accumulators, error))
    fail(first, "wgmma.mma_async: " + error);
  for (auto [thread, accumulator] : llvm::zip(threads, accumulators))
    thread->slots[instr.results[0]].lanes.assign(accumulator.begin(),
                                                 accumulator.end());
  // The operation is asynchronous: its operands stay read and its results
  // unready until each thread's wgmma.wait_group for it.
  for (auto [offset, bytes] : reads.ranges)
    for (size_t i = offset; i < offset + bytes; ++i)
      ++block.shadow[i].wgmmaReaders;
  reads.remaining = threads.size();
  size_t index = block.wgmmaReads.size();
  block.wgmmaReads.push_back(std::move(reads));
  for (Thread *thread : threads) {
    thread->wgmmaOpen.push_back({instr.results[0], index});
    thread->wgmmaPendingSlots.push_back(instr.results[0]);
  }
}
