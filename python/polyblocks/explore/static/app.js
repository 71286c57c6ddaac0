// The PolyBlocks explorer page: asks /api/compile, shows every stage, the
// decisions linked to the input's ops, and the time of every kernel. No
// build step: plain browser JavaScript.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { result: null, stage: null, texts: {}, selectedLine: null };
// Beyond this many lines per side, no diff is computed in the page.
const MAX_DIFF_LINES = 20000;

async function getJSON(url, options) {
  const response = await fetch(url, options);
  let body;
  try {
    body = await response.json();
  } catch (e) {
    throw new Error(`${url}: HTTP ${response.status}, not JSON`);
  }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

function setStatus(text) { $("status").textContent = text; }

function fmt(x, digits = 1) {
  if (x === null || x === undefined) return "–";
  return Number(x).toLocaleString("en-US", { maximumFractionDigits: digits });
}

async function init() {
  const [targets, models] = await Promise.all([getJSON("/api/targets"), getJSON("/api/models")]);
  for (const name of targets.targets) {
    const option = new Option(name + (name === "cpu-host" && targets.host ? ` (${targets.host})` : ""), name);
    $("target").add(option);
  }
  $("target").value = "cpu-host";
  for (const name of models.models) $("model").add(new Option(name, name));
  $("kind").addEventListener("change", () => {
    const model = $("kind").value === "model";
    $("model").hidden = !model;
    $("source").hidden = model;
  });
  $("form").addEventListener("submit", (event) => { event.preventDefault(); compile(); });
  $("target").addEventListener("change", () => { if (state.result) compile(); });
  $("show-diff").addEventListener("change", () => renderStage());
  setStatus("waiting for the program given at start…");
  try {
    const initial = await getJSON("/api/initial");
    if (initial.result) {
      if (initial.request.model) {
        $("kind").value = "model";
        $("kind").dispatchEvent(new Event("change"));
        if (![...$("model").options].some((o) => o.value === initial.request.model))
          $("model").add(new Option(initial.request.model, initial.request.model));
        $("model").value = initial.request.model;
      }
      if (initial.request.target) $("target").value = initial.request.target;
      await show(initial.result);
    }
    setStatus("");
  } catch (e) {
    showError(String(e.message || e));
    setStatus("");
  }
}

async function compile() {
  const request = { target: $("target").value, measure: $("measure").checked };
  if ($("kind").value === "model") request.model = $("model").value;
  else request.source = $("source").value;
  setStatus(`compiling for ${request.target}…`);
  $("compile").disabled = true;
  showError("");
  try {
    const result = await getJSON("/api/compile", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
    await show(result);
    setStatus(result.ok ? `compiled for ${result.target}` : "failed");
  } catch (e) {
    showError(String(e.message || e));
    setStatus("failed");
  } finally {
    $("compile").disabled = false;
  }
}

async function show(result) {
  state.result = result;
  state.texts = {};
  state.selectedLine = null;
  showError(result.ok ? "" : (result.error || "the compile failed"));
  $("notes").textContent = (result.notes || []).join("; ");
  if (result.source !== undefined && $("kind").value === "source") $("source").value = result.source;
  renderTabs();
  renderDecisions();
  renderKernels();
  renderOpDetails();
  loadTarget(result.target);
  const stages = result.stages || [];
  const first = stages.find((s) => s.name === "S1") || stages[0];
  if (first) await selectStage(first.name);
  else { $("left").textContent = ""; $("right").textContent = ""; }
}

async function loadTarget(name) {
  if (!name) return;
  try {
    const facts = await getJSON(`/api/target?name=${encodeURIComponent(name)}`);
    $("target-facts").textContent = facts.text;
  } catch (e) {
    $("target-facts").textContent = String(e.message || e);
  }
}

function renderTabs() {
  const nav = $("stage-tabs");
  nav.textContent = "";
  for (const stage of state.result.stages || []) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.stage = stage.name;
    button.textContent = stage.label && stage.label !== stage.name ? `${stage.name}: ${stage.label}` : stage.name;
    button.addEventListener("click", () => selectStage(stage.name));
    nav.appendChild(button);
  }
}

async function stageText(name) {
  if (!(name in state.texts)) {
    const stage = await getJSON(`/api/stage?id=${state.result.id}&name=${encodeURIComponent(name)}`);
    state.texts[name] = stage.text;
  }
  return state.texts[name];
}

async function selectStage(name) {
  state.stage = name;
  for (const button of $("stage-tabs").children)
    button.classList.toggle("active", button.dataset.stage === name);
  const stages = state.result.stages;
  const index = stages.findIndex((s) => s.name === name);
  await stageText(name);
  if (index > 0) await stageText(stages[index - 1].name);
  renderStage();
}

function lineInfo() {
  // Decisions and kernels per line of the input program.
  const info = new Map();
  const add = (line, key, item) => {
    if (!line) return;
    if (!info.has(line)) info.set(line, { decisions: [], kernels: [] });
    info.get(line)[key].push(item);
  };
  for (const d of state.result.decisions || []) add(d.line, "decisions", d);
  for (const k of state.result.kernels || []) add(k.line, "kernels", k);
  for (const d of state.result.diagnostics || []) add(d.line, "decisions", d);
  return info;
}

function renderLines(pre, text, info, marks) {
  pre.textContent = "";
  const lines = text.split("\n");
  const fragment = document.createDocumentFragment();
  lines.forEach((line, i) => {
    const span = document.createElement("span");
    span.className = "line";
    span.textContent = line || " ";
    const number = i + 1;
    if (info && info.has(number)) {
      span.classList.add("has-info");
      span.dataset.line = number;
      if (state.selectedLine === number) span.classList.add("selected");
    }
    if (marks && marks[i]) span.classList.add(marks[i]);
    fragment.appendChild(span);
  });
  pre.appendChild(fragment);
}

function renderStage() {
  const stages = state.result.stages;
  const index = stages.findIndex((s) => s.name === state.stage);
  const stage = stages[index];
  const previous = index > 0 ? stages[index - 1] : null;
  const text = state.texts[stage.name];
  const before = previous ? state.texts[previous.name] : "";
  $("right-title").textContent = `${stage.label || stage.name}${stage.truncated ? " (cut)" : ""}`;
  $("left-title").textContent = previous ? previous.label || previous.name : "(none)";
  $("stage-info").textContent = `${fmt(stage.size, 0)} characters`;
  const info = lineInfo();
  const diff = $("show-diff").checked && previous;
  if (diff) {
    const result = diffLines(before.split("\n"), text.split("\n"));
    if (result) {
      renderLines($("left"), before, previous.name === "input" ? info : null, result.left);
      renderLines($("right"), text, stage.name === "input" ? info : null, result.right);
      return;
    }
    $("stage-info").textContent += "; too large for a diff in the page";
  }
  // A plain stage: the input's lines are clickable; large texts are set at once.
  const left = $("left"), right = $("right");
  if (previous && previous.name === "input") renderLines(left, before, info);
  else left.textContent = before;
  if (stage.name === "input") renderLines(right, text, info);
  else right.textContent = text;
}

// Myers' O(ND) line diff; marks[i] is "del"/"add" for changed lines, or
// null when a side has more than MAX_DIFF_LINES lines.
function diffLines(a, b) {
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return null;
  const n = a.length, m = b.length, max = n + m;
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  let done = false;
  for (let d = 0; d <= max && !done; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x;
      if (k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])) x = v[offset + k + 1];
      else x = v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[offset + k] = x;
      if (x >= n && y >= m) { done = true; break; }
    }
    if (trace.length > 4000) return null; // too different: not worth the time
  }
  const left = new Array(n).fill(null), right = new Array(m).fill(null);
  let x = n, y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const vv = trace[d];
    const k = x - y;
    let prevK;
    if (k === -d || (k !== d && vv[offset + k - 1] < vv[offset + k + 1])) prevK = k + 1;
    else prevK = k - 1;
    const prevX = vv[offset + prevK], prevY = prevX - prevK;
    while (x > prevX && y > prevY) { x--; y--; }
    if (x === prevX) right[--y] = "add";
    else left[--x] = "del";
  }
  return { left, right };
}

function selectLine(line) {
  state.selectedLine = line;
  for (const span of document.querySelectorAll(".line.selected")) span.classList.remove("selected");
  for (const span of document.querySelectorAll(`.line[data-line="${line}"]`)) span.classList.add("selected");
  renderOpDetails();
}

function renderOpDetails() {
  const box = $("op-details");
  box.textContent = "";
  const line = state.selectedLine;
  if (!line || !state.result) return;
  const info = lineInfo().get(line) || { decisions: [], kernels: [] };
  const source = (state.result.source || "").split("\n")[line - 1] || "";
  const heading = document.createElement("pre");
  heading.textContent = `line ${line}: ${source.trim()}`;
  box.appendChild(heading);
  const list = document.createElement("ul");
  list.id = "op-decisions";
  for (const d of info.decisions) {
    const item = document.createElement("li");
    item.textContent = d.decision === false || d.severity !== "remark"
      ? `${d.severity}: ${d.message}` : d.message;
    list.appendChild(item);
  }
  for (const k of info.kernels) {
    const item = document.createElement("li");
    item.className = "op-kernel";
    item.textContent = `kernel call ${k.site} (${k.kernel}): estimated ${fmt(k.estimate_us, 2)} us` +
      (k.measured_us !== null ? `, measured ${fmt(k.measured_us, 2)} us` : "") +
      `, ${fmt(k.flops, 0)} FLOPs, ${fmt(k.bytes, 0)} B, ${k.bound}-bound`;
    list.appendChild(item);
  }
  if (!list.children.length) {
    const item = document.createElement("li");
    item.textContent = "no decision or kernel names this line";
    list.appendChild(item);
  }
  box.appendChild(list);
}

function renderDecisions() {
  const list = $("decisions");
  list.textContent = "";
  for (const d of state.result.decisions || []) {
    const item = document.createElement("li");
    const topic = document.createElement("span");
    topic.className = "topic";
    topic.textContent = d.line ? `line ${d.line}` : "module";
    item.appendChild(topic);
    item.appendChild(document.createTextNode(`: ${d.message}`));
    if (d.line) item.addEventListener("click", () => selectLine(d.line));
    list.appendChild(item);
  }
}

function renderKernels() {
  const body = $("kernels").querySelector("tbody");
  body.textContent = "";
  const kernels = (state.result.kernels || []).slice();
  const time = (k) => (k.measured_us !== null && k.measured_us !== undefined ? k.measured_us : k.estimate_us || 0);
  kernels.sort((a, b) => time(b) - time(a));
  const measured = kernels.filter((k) => k.measured_us !== null && k.measured_us !== undefined);
  const sum = (list, f) => list.reduce((s, k) => s + (f(k) || 0), 0);
  $("kernel-summary").textContent = kernels.length
    ? `${kernels.length} kernel calls; estimated ${fmt(sum(kernels, (k) => k.estimate_us), 1)} us in all` +
      (measured.length ? `, measured ${fmt(sum(measured, (k) => k.measured_us), 1)} us (mean per call)` : ", not measured") +
      (state.result.estimate_model ? `. Estimate: ${state.result.estimate_model}.` : "")
    : "no kernels";
  for (const k of kernels) {
    const row = body.insertRow();
    row.className = "kernel-row";
    const threads = k.parallel === true ? "parallel" : k.parallel === false ? "serial"
      : k.blocks ? `${k.blocks} x ${k.threads_per_block}` : "";
    const cells = [k.site, k.kernel, k.line ? `line ${k.line}` : "", threads, fmt(k.bytes, 0),
      fmt(k.flops, 0), fmt(k.estimate_us, 2), fmt(k.measured_us, 2), k.bound];
    cells.forEach((value, i) => {
      const cell = row.insertCell();
      cell.textContent = value;
      if (i === 2 && k.line) {
        cell.className = "op-link";
        cell.addEventListener("click", () => selectLine(k.line));
      }
      if (i === 6) cell.className = "estimated-us";
      if (i === 7) cell.className = "measured-us";
    });
  }
  // The largest kernels as bars (measured time where there is one).
  const chart = $("chart");
  chart.textContent = "";
  const top = kernels.slice(0, 15);
  const largest = Math.max(1e-9, ...top.map(time));
  for (const k of top) {
    const row = document.createElement("div");
    row.className = "bar-row";
    const name = document.createElement("span");
    name.className = "bar-name";
    name.textContent = `${k.site} ${k.kernel}${k.line ? " (line " + k.line + ")" : ""}`;
    const bar = document.createElement("div");
    bar.className = "bar" + (k.measured_us !== null && k.measured_us !== undefined ? "" : " estimated");
    bar.style.width = `${(100 * time(k)) / largest}%`;
    const value = document.createElement("span");
    value.textContent = `${fmt(time(k), 1)} us`;
    row.append(name, bar, value);
    chart.appendChild(row);
  }
}

document.addEventListener("click", (event) => {
  const span = event.target.closest && event.target.closest(".line.has-info");
  if (span) selectLine(Number(span.dataset.line));
});

init();
