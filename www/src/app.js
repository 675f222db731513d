// The page: generate IDs with snowdrift/browser (node id and reservation kept in this
// browser's storage), decode any ID, draw its 64 bits. Static: no server logic.
import { decode, fromBase32, openSnowdrift, toBase32 } from "snowdrift/browser";
import { PRESETS, describeLayout, fields, layoutSummary, presetLayout } from "./layouts.js";

const $ = (id) => document.getElementById(id);
const ui = {
  layout: $("layout"), layoutInfo: $("layout-info"), custom: $("custom"), customError: $("custom-error"),
  form: $("generate-form"), node: $("node"), count: $("count"), status: $("status"), ids: $("ids"),
  copyDec: $("copy-dec"), copyB32: $("copy-b32"), decodeLast: $("decode-last"),
  box: $("ids-box"), input: $("decode-input"), readAs: $("form"), suggest: $("suggest"), decoded: $("decoded"),
};
const customInputs = ["c-time", "c-node", "c-dc", "c-seq", "c-unit", "c-epoch", "c-order"].map($);
const MAX_COUNT = 100_000;
const FULL_LIST = 1000; // up to this many IDs, the list has one element per ID
const OVERSCAN = 20; // rows kept above and below the view in a longer list
const PREFS = "snowdrift-www:prefs";

// ---- the layout: a preset or the custom form ----

function customLayout() {
  const [time, node, dc, seq, unit, epoch, order] = customInputs.map((i) => i.value.trim());
  const int = (label, v) => {
    if (!/^\d+$/.test(v)) throw new RangeError(`${label} ${JSON.stringify(v)} is not a whole number`);
    return Number(v);
  };
  const epochMs = /^\d+$/.test(epoch) ? Number(epoch) : Date.parse(epoch);
  if (!Number.isFinite(epochMs)) throw new RangeError(`epoch ${JSON.stringify(epoch)} is neither an ISO time nor Unix milliseconds`);
  const nodeBits = int("node bits", node);
  const datacenterBits = int("datacenter bits", dc || "0");
  const spec = { timeBits: int("time bits", time), sequenceBits: int("sequence bits", seq), unitMs: int("tick", unit), epochMs, order };
  if (datacenterBits === 0) return { ...spec, nodeBits };
  if (datacenterBits > nodeBits) throw new RangeError(`datacenter bits ${datacenterBits} exceed node bits ${nodeBits}`);
  return { ...spec, datacenterBits, workerBits: nodeBits - datacenterBits };
}

/** The selected layout: { key, layout, facts }, or throws with a message for the user. */
function selected() {
  const key = ui.layout.value;
  const layout = key === "custom" ? customLayout() : presetLayout(key);
  return { key: key === "custom" ? `custom:${JSON.stringify(layout)}` : key, layout, facts: describeLayout(layout) };
}

function showLayout() {
  ui.custom.hidden = ui.layout.value !== "custom";
  ui.customError.textContent = "";
  try {
    ui.layoutInfo.textContent = layoutSummary(selected().facts);
  } catch (e) {
    ui.layoutInfo.textContent = "";
    ui.customError.textContent = e.message;
  }
  savePrefs();
  showDecoded();
}

// ---- generate ----

let current; // { key, gen }: the open generator
let ids = new BigUint64Array(0);
let shown = {}; // the rows in the list: { first, last, n }
let rowHeight = 24; // px, measured from the first row once shown

async function generatorFor(key, layout, nodeText) {
  const wanted = `${key}|${nodeText}`;
  if (current?.key === wanted) return current.gen;
  if (current) {
    const old = current;
    current = undefined;
    await old.gen.close();
  }
  let node;
  if (nodeText !== "") {
    if (!/^\d+$/.test(nodeText)) throw new RangeError(`node ${JSON.stringify(nodeText)} is not a whole number`);
    node = Number(nodeText);
  }
  const gen = await openSnowdrift({ name: `www:${key}`, layout, node });
  current = { key: wanted, gen };
  return gen;
}

/**
 * Shows `ids` in the list. Up to FULL_LIST IDs it holds one element per ID. Above that it
 * holds only the rows in and near the view (a virtual list: the padding stands in for the
 * rest, each row says its position with aria-posinset), so 100,000 IDs cost no more to
 * show than 100; `data-count` gives the total and the copy buttons copy every ID.
 */
function paint() {
  const n = ids.length;
  let first = 0;
  let last = n;
  if (n > FULL_LIST) {
    const view = Math.ceil(ui.box.clientHeight / rowHeight);
    first = Math.max(0, Math.min(n - view, Math.floor(ui.box.scrollTop / rowHeight) - OVERSCAN));
    last = Math.min(n, first + view + 2 * OVERSCAN);
  }
  if (first === shown.first && last === shown.last && n === shown.n) return;
  shown = { first, last, n };
  const virtual = n > FULL_LIST;
  const pos = (i) => (virtual ? ` aria-posinset="${i + 1}" aria-setsize="${n}"` : "");
  let html = "";
  for (let i = first; i < last; i++) html += `<li data-b32="${toBase32(ids[i])}"${pos(i)}>${ids[i]}</li>`;
  ui.ids.style.paddingTop = virtual ? `${first * rowHeight}px` : "";
  ui.ids.style.paddingBottom = virtual ? `${(n - last) * rowHeight}px` : "";
  ui.ids.dataset.count = String(n);
  ui.ids.innerHTML = html;
}

function showIds() {
  shown = {};
  ui.box.scrollTop = 0;
  paint();
  const row = ui.ids.firstElementChild;
  if (row && ids.length > FULL_LIST && Math.abs(row.getBoundingClientRect().height - rowHeight) > 0.5) {
    rowHeight = row.getBoundingClientRect().height; // the row height the style gave
    shown = {};
    paint();
  }
}

const number = new Intl.NumberFormat("en");

async function generate(event) {
  event.preventDefault();
  const count = Number(ui.count.value);
  const setStatus = (text, error = false) => {
    ui.status.textContent = text;
    ui.status.classList.toggle("error", error);
  };
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    setStatus(`How many must be a whole number from 1 to ${number.format(MAX_COUNT)}.`, true);
    ui.count.focus();
    return;
  }
  ui.form.querySelector("button").disabled = true;
  try {
    const { key, layout } = selected();
    const gen = await generatorFor(key, layout, ui.node.value.trim());
    const start = performance.now();
    ids = gen.nextBatch(count);
    const ms = performance.now() - start;
    for (const b of [ui.copyDec, ui.copyB32, ui.decodeLast]) b.disabled = false;
    setStatus(`${number.format(count)} ${count === 1 ? "ID" : "IDs"} from node ${gen.node} in ${ms.toFixed(1)} ms (kept in ${gen.storage === "indexeddb" ? "IndexedDB" : "localStorage"}).`);
    savePrefs();
    showIds();
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    ui.form.querySelector("button").disabled = false;
  }
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    ui.status.textContent = `Copied ${what}.`;
  } catch {
    ui.status.textContent = `Copying was refused by the browser; select the IDs in the list instead.`;
  }
}

// ---- decode ----

const HEX = /^(?:0x)?[0-9a-f]{1,16}$/i;

/** Reads an ID in any form: { id, form } or throws with a message for the user. */
function readId(text, form) {
  const t = text.replace(/[\s_,]/g, "");
  if (form === "auto") {
    if (/^0x/i.test(t)) form = "hex";
    else if (/^\d+$/.test(t)) form = "decimal";
    else if (t.length === 13) form = "base32"; // the core names a bad character and its position
    else if (t.length === 16 && HEX.test(t)) form = "hex";
    else throw new RangeError(`${JSON.stringify(text)} is not a decimal, hex (0x…, up to 16 digits) or base32 (13 characters) ID`);
  }
  if (form === "decimal") {
    if (!/^\d+$/.test(t)) throw new RangeError(`${JSON.stringify(text)} is not a decimal number`);
    if (BigInt(t) > 0xffffffffffffffffn) throw new RangeError(`${t} does not fit in 64 bits`);
    return { id: BigInt(t), form };
  }
  if (form === "hex") {
    if (!HEX.test(t)) throw new RangeError(`${JSON.stringify(text)} is not 1 to 16 hex digits`);
    return { id: BigInt(t.startsWith("0x") || t.startsWith("0X") ? t : `0x${t}`), form };
  }
  return { id: fromBase32(t), form };
}

const SHORT_NAMES = {
  default: "default", twitter: "Twitter", discord: "Discord", sonyflake: "Sonyflake",
  instagram: "Instagram", baidu: "Baidu", browser: "16-bit node",
};
const plausible = (ms) => ms <= Date.now() + 86_400_000;

function suggestions(id, currentKey) {
  const out = [];
  for (const key of PRESETS) {
    try {
      const p = decode(id, presetLayout(key));
      if (plausible(p.timestampMs)) out.push({ key, when: p.date.toISOString().slice(0, 10), current: key === currentKey });
    } catch {
      // does not fit this layout
    }
  }
  return out;
}

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
};

function showDecoded() {
  const text = ui.input.value.trim();
  ui.decoded.textContent = "";
  ui.suggest.textContent = "";
  if (text === "") return;
  let id, form, sel;
  try {
    ({ id, form } = readId(text, ui.readAs.value));
    sel = selected();
  } catch (e) {
    ui.decoded.append(el("p", { class: "error" }, e.message));
    return;
  }
  const options = suggestions(id, sel.key);
  if (options.length) {
    const label = el("span", { id: "suggest-label" }, "Layouts that give a plausible time: ");
    const list = options.map((o) => {
      const b = el("button", { type: "button", "data-layout": o.key, "aria-describedby": "suggest-label" }, `${SHORT_NAMES[o.key]} ${o.when}`);
      if (o.current) b.setAttribute("aria-pressed", "true");
      b.addEventListener("click", () => {
        ui.layout.value = o.key;
        showLayout();
      });
      return b;
    });
    ui.suggest.append(label, ...list);
  }
  let p;
  try {
    p = decode(id, sel.layout);
  } catch (e) {
    ui.decoded.append(el("p", { class: "error" }, `${e.message} in the ${ui.layout.selectedOptions[0].textContent} layout.`));
    return;
  }
  const iso = p.date.toISOString();
  const local = p.date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "long" });
  const who = p.datacenter === undefined ? `node ${p.node}` : `datacenter ${p.datacenter}, worker ${p.worker}`;
  const mono = (text) => el("span", { class: "mono" }, text);
  const rows = [
    ["Time (UTC)", el("time", { datetime: iso }, iso)],
    ["Local time", local],
    ["Unix ms", mono(String(p.timestampMs))],
  ];
  if (p.datacenter !== undefined) rows.push(["Datacenter", String(p.datacenter)], ["Worker", String(p.worker)]);
  rows.push(["Node", String(p.node)], ["Sequence", String(p.sequence)]);
  rows.push(["Decimal", mono(id.toString())], ["Hex", mono(id.toString(16).padStart(16, "0"))], ["Base32", mono(toBase32(id))]);
  const dl = el("dl", {}, ...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const summary = el("p", { class: "summary" }, "Made ", el("span", { class: "nowrap" }, iso), ` by ${who}, sequence ${p.sequence}`,
    el("span", { class: "muted" }, ` (read as ${form})`));
  ui.decoded.append(summary, dl, bitFigure(id, sel.facts, p));
}

const SHORT = { unused: "", time: "time", datacenter: "dc", worker: "wk", node: "node", sequence: "seq" };

/** The 64 bits in two rows of 32, each field coloured and labelled (for sighted users; the list above says the same in words). */
function bitFigure(id, facts, parts) {
  const fs = fields(facts, parts);
  const tick = (parts.timestampMs - facts.epochMs) / facts.unitMs;
  let high = 63;
  const spans = fs.map((f) => {
    const s = { ...f, high, low: high - f.bits + 1, value: f.name === "time" ? tick : f.value };
    high -= f.bits;
    return s;
  });
  const rows = [63, 31].map((top) => {
    const cells = el("div", { class: "bits" });
    const labels = el("div", { class: "bits" });
    for (let b = top; b > top - 32; b--) {
      const f = spans.find((s) => b <= s.high && b >= s.low);
      cells.append(el("span", { class: `bit f-${f.name}`, title: `bit ${b}: ${f.name}` }, String((id >> BigInt(b)) & 1n)));
    }
    for (const s of spans) {
      const hi = Math.min(s.high, top);
      const lo = Math.max(s.low, top - 31);
      if (hi < lo) continue;
      const width = hi - lo + 1;
      const text = width >= 8 ? s.name : width >= 2 ? SHORT[s.name] : "";
      const label = el("span", { class: `label f-${s.name}`, style: `grid-column: span ${width}` }, text);
      labels.append(label);
    }
    const index = el("div", { class: "bitidx" }, el("span", {}, `bit ${top}`), el("span", {}, `bit ${top - 31}`));
    return [index, cells, labels];
  });
  const caption = `Bits 63 to 0: ${spans.map((s) => `${s.name} ${s.bits} ${s.bits === 1 ? "bit" : "bits"}${s.value === undefined ? "" : ` = ${s.value}`}`).join(", ")}.`;
  return el("figure", { class: "figure" }, el("div", { "aria-hidden": "true", class: "bitrows" }, ...rows.flat()), el("figcaption", {}, caption));
}

// ---- preferences (layout, custom widths, count), kept in localStorage ----

function savePrefs() {
  try {
    localStorage.setItem(PREFS, JSON.stringify({ layout: ui.layout.value, count: ui.count.value, custom: customInputs.map((i) => i.value) }));
  } catch {
    // storage refused: preferences are a convenience
  }
}

function loadPrefs() {
  try {
    const p = JSON.parse(localStorage.getItem(PREFS));
    if (!p) return;
    if ([...ui.layout.options].some((o) => o.value === p.layout)) ui.layout.value = p.layout;
    if (p.count) ui.count.value = p.count;
    p.custom?.forEach((v, i) => customInputs[i] && (customInputs[i].value = v));
  } catch {
    // nothing usable saved
  }
}

// ---- wiring ----

loadPrefs();
showLayout();
ui.layout.addEventListener("change", showLayout);
for (const i of customInputs) i.addEventListener("input", showLayout);
ui.form.addEventListener("submit", generate);
ui.copyDec.addEventListener("click", () => copy(Array.from(ids, String).join("\n"), `${number.format(ids.length)} IDs (decimal)`));
ui.copyB32.addEventListener("click", () => copy(Array.from(ids, toBase32).join("\n"), `${number.format(ids.length)} IDs (base32)`));
ui.decodeLast.addEventListener("click", () => {
  ui.input.value = String(ids[ids.length - 1]);
  ui.readAs.value = "auto";
  showDecoded();
  ui.input.focus();
});
ui.box.addEventListener("scroll", () => requestAnimationFrame(paint), { passive: true });
ui.input.addEventListener("input", showDecoded);
ui.readAs.addEventListener("change", showDecoded);
document.documentElement.dataset.ready = "true";

if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("sw.js").catch((e) => console.warn("offline cache unavailable:", e.message));
}
