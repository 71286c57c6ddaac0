//===- Compiler.cpp - pbCompile: MLIR text to artifact
//----------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The whole compiler behind one call: check the input contract, attach the
// target, run S1-S3 (core) and the vendor's S4, emit with the vendor's S5,
// and describe the entries in the artifact's metadata. Every diagnostic is
// collected into the returned status; nothing is printed.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "pb/InitAll.h"
#include "pb/Target/Backend.h"
#include "pb/Target/TargetRegistry.h"
#include "pb/Targets/InitBackends.h"
#include "pb/Transforms/DimArgs.h"
#include "pb/Transforms/InPlace.h"
#include "pb/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ThreadPool.h"

#include <mutex>

using namespace mlir;
using namespace mlir::pb::runtime;

static void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    pb::registerAllPasses();
    pb::registerAllTargetBackends();
  });
}

/// "f32", "bf16", "i8", ... as the metadata spells element types.
static std::string getDTypeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (auto f = dyn_cast<FloatType>(type))
    return "f" + std::to_string(f.getWidth());
  if (auto i = dyn_cast<IntegerType>(type))
    return "i" + std::to_string(i.getWidth());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The metadata's name of size `k` of an entry: "s<k>", the k-th of its
/// `index` arguments in order.
static std::string getSizeName(unsigned k) { return "s" + std::to_string(k); }

/// The entry's tensors of `types` (its arguments or results) with their
/// `pb.dim_args` from `dimArgs`: a dynamic dimension is the name of the size
/// that holds it. `sizeOf` maps argument positions to size numbers.
static llvm::json::Array
describeTensors(TypeRange types,
                llvm::function_ref<Attribute(unsigned)> dimArgs,
                const llvm::DenseMap<int64_t, unsigned> &sizeOf) {
  llvm::json::Array tensors;
  for (auto [index, type] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue; // an index size
    auto positions = dyn_cast_or_null<DenseI64ArrayAttr>(dimArgs(index));
    llvm::json::Array shape;
    for (auto [d, dim] : llvm::enumerate(tensor.getShape())) {
      if (!ShapedType::isDynamic(dim) || !positions ||
          !sizeOf.count(positions[d]))
        shape.push_back(dim);
      else
        shape.push_back(getSizeName(sizeOf.lookup(positions[d])));
    }
    tensors.push_back(
        llvm::json::Object{{"shape", std::move(shape)},
                           {"dtype", getDTypeName(tensor.getElementType())}});
  }
  return tensors;
}

namespace {
struct CompileOptions {
  CompileOptions() {
    // Artifacts carry their kernels' IR for the emulator unless asked not
    // to (emulation-ir=0): pbExecutableLoadEmulated needs it.
    pipeline.emulationIR = true;
  }
  pb::PipelineOptions pipeline;
  bool reference = false;
  /// Time the parse, every pass and S5, and put the report in the
  /// metadata ("compile_timing").
  bool timing = false;
  /// Threads for S4's function passes and S5 (0: one per core); the
  /// artifact does not depend on it.
  unsigned threads = 0;
  /// Directory of S5's kernel cache ("" for none); nor does it depend on it.
  std::string kernelCache;
  /// Verify the IR after every pass rather than after every stage (a
  /// pass that breaks the IR is then named; verification after each of
  /// the ~80 passes took a fifth to a quarter of a model's compile time).
  bool verifyEach = false;
};
} // namespace

static pb_status *parseOptions(const char *text, CompileOptions &options) {
  if (!text)
    return nullptr;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(text).split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.trim().split('=');
    auto boolValue = [&](bool &into) -> pb_status * {
      if (value == "1" || value == "true" || value == "on")
        into = true;
      else if (value == "0" || value == "false" || value == "off")
        into = false;
      else
        return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          "option '" + key + "' takes 0 or 1, not '" + value +
                              "'");
      return nullptr;
    };
    pb_status *status = nullptr;
    if (key == "fusion")
      status = boolValue(options.pipeline.fusion);
    else if (key == "reduce-reduce-fusion")
      status = boolValue(options.pipeline.reduceFusion);
    else if (key == "matrix-units")
      status = boolValue(options.pipeline.matrixUnits);
    else if (key == "allow-tf32")
      status = boolValue(options.pipeline.allowTF32);
    else if (key == "allow-tf32-convolutions")
      status = boolValue(options.pipeline.allowTF32Convolutions);
    else if (key == "warpgroup-units")
      status = boolValue(options.pipeline.warpgroupUnits);
    else if (key == "pack-constants")
      status = boolValue(options.pipeline.packConstants);
    else if (key == "emulation-ir")
      status = boolValue(options.pipeline.emulationIR);
    else if (key == "profile")
      status = boolValue(options.pipeline.profile);
    else if (key == "timing")
      status = boolValue(options.timing);
    else if (key == "verify-each")
      status = boolValue(options.verifyEach);
    else if (key == "kernel-cache")
      options.kernelCache = value.str();
    else if (key == "codegen") {
      if (value == "ptx" || value == "tile-ir")
        options.pipeline.codegen = value.str();
      else
        status = makeStatus(PB_STATUS_INVALID_ARGUMENT,
                            "option 'codegen' takes ptx or tile-ir, not '" +
                                value + "'");
    } else if (key == "threads") {
      if (value.getAsInteger(10, options.threads) || options.threads > 4096)
        status = makeStatus(PB_STATUS_INVALID_ARGUMENT,
                            "option 'threads' takes a count from 0 (one per "
                            "core) to 4096, not '" +
                                value + "'");
    } else if (key == "pipeline" &&
               (value == "optimized" || value == "reference"))
      options.reference = value == "reference";
    else if (key == "mma-fusion")
      status = makeStatus(PB_STATUS_UNSUPPORTED,
                          "option '" + key +
                              "' is not supported yet: that optimization "
                              "does not exist in this version");
    else
      status = makeStatus(PB_STATUS_INVALID_ARGUMENT,
                          "unknown option '" + item +
                              "'; known: fusion=0|1, reduce-reduce-fusion=0|1, "
                              "matrix-units=0|1, "
                              "allow-tf32=0|1, allow-tf32-convolutions=0|1, "
                              "warpgroup-units=0|1, pack-constants=0|1, "
                              "emulation-ir=0|1, profile=0|1, "
                              "timing=0|1, verify-each=0|1, threads=N, "
                              "kernel-cache=DIR, codegen=ptx|tile-ir, "
                              "pipeline=optimized|reference");
    if (status)
      return status;
  }
  return nullptr;
}

/// The options as the metadata records them: all but `threads`,
/// `kernel-cache` and `verify-each`, which do not change the artifact (so
/// that it is the same for any thread count, with and without the cache).
static std::string getRecordedOptions(const char *text) {
  if (!text)
    return "";
  llvm::SmallVector<llvm::StringRef> items, kept;
  llvm::StringRef(text).split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items)
    if (!llvm::is_contained({"threads", "kernel-cache", "verify-each"},
                            item.trim().split('=').first))
      kept.push_back(item);
  return llvm::join(kept, ",");
}

pb_status *pbCompile(const char *moduleText, size_t size, const char *target,
                     const char *optionsText, pb_artifact **out) {
  return guard([&]() -> pb_status * {
    if (!moduleText || !target || !out)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        "pbCompile: null module, target or output");
    *out = nullptr;
    CompileOptions options;
    if (pb_status *status = parseOptions(optionsText, options))
      return status;
    initializeOnce();

    llvm::Expected<const pb::ChipDesc *> chip = pb::resolveTarget(target);
    if (!chip)
      return makeStatus(PB_STATUS_INVALID_ARGUMENT,
                        llvm::toString(chip.takeError()));
    const pb::TargetBackend *backend = pb::lookupTargetBackend((*chip)->vendor);
    if (!backend)
      return makeStatus(PB_STATUS_UNSUPPORTED,
                        llvm::Twine("code generation for ") +
                            pb::stringifyVendor((*chip)->vendor) +
                            " targets (" + (*chip)->name +
                            ") is not supported by this build");

    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    pb::registerAllDialects(registry);
    pb::registerAllTargetDialects(registry);
    // Function passes (S4's, one per kernel) run on `options.threads`
    // threads (0: one per core); the result does not depend on it.
    llvm::ThreadPoolStrategy strategy =
        llvm::hardware_concurrency(options.threads);
    std::optional<llvm::DefaultThreadPool> threadPool;
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    if (strategy.compute_thread_count() > 1) {
      threadPool.emplace(strategy);
      context.setThreadPool(*threadPool);
    }
    std::string diagnostics;
    llvm::raw_string_ostream diagOS(diagnostics);
    std::mutex diagMutex;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Remark)
        return success();
      std::lock_guard<std::mutex> lock(diagMutex);
      diagOS << diag.getLocation() << ": "
             << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                                 : "note: ")
             << diag << "\n";
      for (Diagnostic &note : diag.getNotes())
        if (!llvm::StringRef(note.str()).starts_with("see current operation"))
          diagOS << note.getLocation() << ": note: " << note << "\n";
      return success();
    });

    // With timing=1: MLIR's report of the parse, each pass and S5, in
    // the order they ran.
    // (The stream outlives the manager, which prints when it is destroyed.)
    std::string timingReport;
    llvm::raw_string_ostream timingOS(timingReport);
    DefaultTimingManager timing;
    if (options.timing) {
      timing.setEnabled(true);
      timing.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
      timing.setOutput(createOutputStrategy(
          DefaultTimingManager::OutputFormat::Text, timingOS));
    }
    TimingScope rootTimer = timing.getRootScope();
    TimingScope parseTimer = rootTimer.nest("Parse");
    // MLIR's lexer reads one byte past the text, expecting a NUL there; the
    // caller's `size` bytes need not be followed by one, so they are copied
    // (a std::string is NUL-terminated).
    const std::string source(moduleText, size);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context, "input");
    parseTimer.stop();
    if (!module)
      return makeStatus(PB_STATUS_COMPILE_ERROR,
                        "cannot parse the module:\n" + diagnostics);

    // The entries, described before the pipeline changes their signatures.
    llvm::json::Array entries;
    for (auto func : module->getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      FunctionType type = func.getFunctionType();
      bool tensorsOnly =
          llvm::all_of(
              type.getInputs(),
              [](Type t) { return isa<RankedTensorType>(t) || t.isIndex(); }) &&
          llvm::all_of(type.getResults(), llvm::IsaPred<RankedTensorType>);
      if (!tensorsOnly)
        continue; // pb-check-input-contract reports it.
      // The entry's sizes: its index arguments, in order.
      llvm::DenseMap<int64_t, unsigned> sizeOf;
      llvm::json::Array sizes;
      for (auto [index, input] : llvm::enumerate(type.getInputs()))
        if (input.isIndex()) {
          unsigned k = sizes.size();
          sizes.push_back(getSizeName(k));
          sizeOf[index] = k;
        }
      if (!sizes.empty() && (*chip)->vendor != pb::Vendor::CPU)
        return makeStatus(
            PB_STATUS_UNSUPPORTED,
            llvm::Twine("entry '") + func.getName() +
                "' takes sizes (dynamic shapes): only CPU targets compile "
                "them yet, not " +
                (*chip)->name);
      llvm::json::Object description{
          {"name", func.getName()},
          {"inputs", describeTensors(
                         type.getInputs(),
                         [&](unsigned i) {
                           return func.getArgAttr(i, pb::kDimArgsAttrName);
                         },
                         sizeOf)},
          {"outputs", describeTensors(
                          type.getResults(),
                          [&](unsigned i) {
                            return func.getResultAttr(i, pb::kDimArgsAttrName);
                          },
                          sizeOf)}};
      if (!sizes.empty())
        description["sizes"] = std::move(sizes);
      // Results that update an input in place (pb/Transforms/InPlace.h):
      // the runtimes pass the input's buffer as the output.
      llvm::json::Array inPlace;
      for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
        if (auto input =
                func.getResultAttrOfType<IntegerAttr>(r, pb::kInPlaceAttrName))
          inPlace.push_back(
              llvm::json::Object{{"output", r}, {"input", input.getInt()}});
      if (!inPlace.empty())
        description["in_place"] = std::move(inPlace);
      entries.push_back(std::move(description));
    }

    // The reference pipeline leaves out S3 and the S1 and S2 rewrites
    // that only make the code faster.
    if (options.reference)
      options.pipeline.optionalRewrites = false;
    // One pass manager per stage. The IR is verified after each stage (and
    // after each pass with verify-each=1): a stage that produces invalid IR
    // is an internal error, reported with the stage's name.
    for (llvm::StringRef stage : {"s1", "s2", "s3", "s4"}) {
      if (stage == "s3" && options.reference)
        continue;
      PassManager pm(&context);
      pm.enableVerifier(options.verifyEach);
      if (stage == "s1") {
        pm.addPass(pb::createPBCheckInputContractPass());
        pm.addPass(pb::createPBAttachTargetPass({target}));
      }
      if (failed(pb::addStagePipeline(pm, stage, *chip, options.pipeline)))
        return makeStatus(PB_STATUS_UNSUPPORTED,
                          "no pipeline for stage " + stage);
      if (options.timing)
        pm.enableTiming(rootTimer);
      if (failed(pm.run(*module)))
        return makeStatus(PB_STATUS_COMPILE_ERROR,
                          "compilation failed:\n" + diagnostics);
      if (options.verifyEach)
        continue;
      TimingScope verifyTimer = rootTimer.nest("Verify");
      if (failed(verify(*module)))
        return makeStatus(PB_STATUS_COMPILE_ERROR,
                          "internal error: stage " + stage.upper() +
                              " produced invalid IR (compile with "
                              "verify-each=1 to find the pass):\n" +
                              diagnostics);
    }

    pb::EmittedBinary binary;
    TimingScope emitTimer = rootTimer.nest("S5: code emission (LLVM)");
    pb::EmitOptions emitOptions;
    emitOptions.threads = options.threads;
    emitOptions.kernelCache = options.kernelCache;
    if (failed(backend->emit(*module, **chip, emitOptions, emitTimer, binary)))
      return makeStatus(PB_STATUS_COMPILE_ERROR,
                        "code emission failed:\n" + diagnostics);
    emitTimer.stop();
    rootTimer.stop();
    if (options.timing) {
      timing.print();
      timing.setEnabled(false);
      timingOS << binary.timingDetail;
    }

    llvm::json::Object metadata{
        {"format", binary.format},
        {"target", (*chip)->name},
        {"requested_target", target},
        {"vendor", pb::stringifyVendor((*chip)->vendor)},
        {"compiler", pbVersion()},
        {"options", getRecordedOptions(optionsText)},
        // Alignment (bytes) the kernels assume of buffer arguments: the
        // chip's widest vector access.
        {"buffer_alignment",
         std::max<int64_t>(1, (*chip)->vectorWidthBits / 8)},
        {"entries", std::move(entries)}};
    if (binary.kernels)
      metadata["kernels"] = llvm::json::Object{
          {"total", binary.kernels}, {"compiled", binary.compiledKernels}};
    if (options.timing)
      metadata["compile_timing"] = timingReport;
    if (binary.estimate.kind() != llvm::json::Value::Null)
      metadata["estimate"] = std::move(binary.estimate);
    auto artifact = std::make_unique<pb_artifact>();
    artifact->metadata =
        llvm::formatv("{0:2}", llvm::json::Value(std::move(metadata))).str();
    artifact->payload = std::move(binary.payload);
    *out = artifact.release();
    return nullptr;
  });
}
