// The page: generate IDs with snowdrift/browser (node id and reservation kept in this
// browser's storage), or on a node id leased from a URL given in the settings
// (snowdrift/browser-lease, in lease.js, loaded only then), decode any ID, draw its 64
// bits. Static: no server logic.
import { ObjectId, decode, layoutInfo, maxIdAt, minIdAt, openSnowdrift, parseId, toBase32 } from "snowdrift/browser";
import { PRESETS, describeLayout, fields, layoutSummary, namesOf, presetLayout } from "./layouts.js";

const $ = (id) => document.getElementById(id);
const ui = {
  layout: $("layout"),
  layoutInfo: $("layout-info"),
  custom: $("custom"),
  customError: $("custom-error"),
  form: $("generate-form"),
  node: $("node"),
  nodeWarning: $("node-warning"),
  count: $("count"),
  status: $("status"),
  ids: $("ids"),
  copyDec: $("copy-dec"),
  copyB32: $("copy-b32"),
  decodeLast: $("decode-last"),
  box: $("ids-box"),
  input: $("decode-input"),
  decodeLayout: $("decode-layout"),
  suggest: $("suggest"),
  decoded: $("decoded"),
  rangeTime: $("range-time"),
  rangeOut: $("range-out"),
  offline: $("offline"),
  leaseSetting: $("lease-setting"),
  leaseUrl: $("lease-url"),
  leaseSpace: $("lease-space"),
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
  if (!Number.isFinite(epochMs))
    throw new RangeError(`epoch ${JSON.stringify(epoch)} is neither an ISO time nor Unix milliseconds`);
  const nodeBits = int("node bits", node);
  const datacenterBits = int("datacenter bits", dc || "0");
  const spec = {
    timeBits: int("time bits", time),
    sequenceBits: int("sequence bits", seq),
    unitMs: int("tick", unit),
    epochMs,
    order,
  };
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
  let ranOut = false;
  try {
    const { facts } = selected();
    ui.layoutInfo.textContent = layoutSummary(facts, namesOf(ui.layout.value));
    ranOut = facts.exhaustsAtMs <= Date.now();
  } catch (e) {
    ui.layoutInfo.textContent = "";
    ui.customError.textContent = words(e.message);
  }
  // A layout whose time field has run out can decode, not make IDs.
  ui.form.querySelector("button").disabled = ranOut;
  if (ranOut)
    setStatus(
      `This layout ran out of time on ${day(selected().facts.exhaustsAtMs)}: it can no longer make IDs. Pick another layout to make IDs; decoding still works.`,
      true,
    );
  else if (ui.status.dataset.ranOut) setStatus("");
  ui.status.dataset.ranOut = ranOut ? "true" : "";
  savePrefs();
  if (ui.decodeLayout.value === "generator") {
    showDecoded();
    showRange();
  }
}

const day = (ms) => new Date(ms).toISOString().slice(0, 10);

function setStatus(text, error = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle("error", error);
}

/**
 * A message of the package in plain words for the page: dates instead of raw Unix
 * milliseconds, and the page's own terms instead of the API's option names.
 */
function words(message) {
  return message
    .replace(/\b(\d{11,16}) ms\b/g, (_, ms) => new Date(Number(ms)).toISOString().replace(".000Z", "Z"))
    .replace(/ \(name "page:[^"]*"\)/g, "")
    .replace(/leave node out/g, "leave the node id empty")
    .replace(
      /snowdrift\/browser needs the Web Locks API .*/,
      "This page can only make IDs on https:// or on http://localhost: browsers offer what it needs to give each tab its own node id (Web Locks) only there. Decoding works anywhere.",
    );
}

// ---- generate ----

let current; // { key, gen }: the open generator
let ids = new BigUint64Array(0);
let shown = {}; // the rows in the list: { first, last, n }
let rowHeight = 24; // px, measured from the first row once shown

async function generatorFor(key, layout, nodeText) {
  // A lease URL in the settings: the node id (and the layout) come from that server.
  const lease = ui.leaseUrl.value.trim();
  const space = ui.leaseSpace.value.trim();
  const wanted = lease ? `lease|${lease}|${space}` : `${key}|${nodeText}`;
  if (current?.key === wanted) return current.gen;
  if (current) {
    const old = current;
    current = undefined;
    await old.gen.close();
  }
  if (lease) {
    // Loaded only by those who lease: the page's own script does not grow.
    const { openLeased } = await import("./lease.js");
    const gen = await openLeased({ lease, space, name: `page:lease:${space}` });
    current = { key: wanted, gen };
    return gen;
  }
  let node;
  if (nodeText !== "") {
    if (!/^\d+$/.test(nodeText)) throw new RangeError(`node ${JSON.stringify(nodeText)} is not a whole number`);
    node = Number(nodeText);
  }
  const gen = await openSnowdrift({ name: `page:${key}`, layout, node });
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
  for (let i = first; i < last; i++) {
    const b32 = toBase32(ids[i]);
    html += `<li data-b32="${b32}"${pos(i)}><span class="dec">${ids[i]}</span><span class="sr">, base32 </span><span class="b32">${b32}</span></li>`;
  }
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
    const ahead = gen.decode(ids[ids.length - 1]).timeMs - Date.now();
    const borrowed =
      ahead > 0
        ? ` The newest is dated ${number.format(ahead)} ms ahead of this clock: a tick holds only so many IDs, so a big batch takes the next ticks early (the IDs stay unique and in order).`
        : "";
    const leased = gen.lease
      ? ` Node ${gen.node} is leased from ${ui.leaseUrl.value.trim()} (space ${gen.lease.space}, its layout) until ${new Date(gen.lease.until).toISOString()}.`
      : "";
    setStatus(
      `${number.format(count)} ${count === 1 ? "ID" : "IDs"} from node ${gen.node} in ${ms.toFixed(1)} ms.${borrowed}${leased}`,
    );
    savePrefs();
    showIds();
  } catch (e) {
    setStatus(words(e.message), true);
  } finally {
    ui.form.querySelector("button").disabled = ui.status.dataset.ranOut === "true";
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

/**
 * Reads what people paste as an ID: { objectId } for 24 hex digits, else { id, form, note,
 * hint }, or throws with a message for the user. The forms of an ID are the package's
 * (`parseId`); the page adds Discord mentions and ObjectIds. `hint` names a preset the
 * text points to (a Discord mention).
 */
function readId(text) {
  let t = text.trim();
  let note = "";
  let hint;
  const mention = /^<(@!?|@&|#)(\d+)>$/.exec(t);
  if (mention) {
    t = mention[2];
    hint = "discord";
    note = "a Discord mention";
  }
  t = t.replace(/[\s_,]/g, "");
  if (/^[0-9a-f]{24}$/i.test(t)) return { objectId: ObjectId.parse(t) };
  let id;
  try {
    id = parseId(t);
  } catch (e) {
    if (/is not decimal, hex/.test(e.message)) {
      throw new RangeError(
        `${JSON.stringify(text)} is not a decimal, hex (0x…, or 16 digits), base32 (13 characters) or ObjectId (24 hex digits) ID`,
      );
    }
    throw e;
  }
  if (t.startsWith("-")) {
    note = "a negative number: read as the signed 64-bit column that stores it, the same 64 bits as an unsigned ID";
  }
  const form = /^-?\d+$/.test(t) ? "decimal" : /^0x/i.test(t) || t.length === 16 ? "hex" : "base32";
  return { id, form, note, hint };
}

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
/** "10 years ago", "in 3 seconds": the largest unit that fits. */
function ago(ms) {
  const d = ms - Date.now();
  const units = [
    ["year", 31_557_600_000],
    ["month", 2_629_800_000],
    ["day", 86_400_000],
    ["hour", 3_600_000],
    ["minute", 60_000],
    ["second", 1000],
  ];
  for (const [unit, size] of units) {
    if (Math.abs(d) >= size || unit === "second") return relative.format(Math.trunc(d / size), unit);
  }
  return "";
}
const DAY_AHEAD = 86_400_000;
const MAX_SAFE_ID = BigInt(Number.MAX_SAFE_INTEGER);

/** The ID under a layout: { key, parts, facts } or undefined where it does not fit. */
function underLayout(id, key) {
  try {
    const layout = key === "generator" ? selected().layout : presetLayout(key);
    const facts = describeLayout(layout);
    return { key, layout, facts, parts: decode(id, layout) };
  } catch {
    return undefined;
  }
}

/** What a field list says of a decoded ID: "worker 1, process 0, sequence 7". */
function whoText(key, p) {
  const n = namesOf(key);
  const who =
    p.datacenter === undefined ? `${n.node} ${p.node}` : `${n.datacenter} ${p.datacenter}, ${n.worker} ${p.worker}`;
  return `${who}, sequence ${p.sequence}`;
}

/**
 * The presets under which the ID's time is plausible (not after tomorrow), ranked: the
 * one the text points to first (a Discord mention), then the smaller sequence and node
 * values (IDs are mostly made one at a time, by few nodes), then the later time.
 */
function ranked(id, hint) {
  const out = PRESETS.map((key) => underLayout(id, key)).filter((u) => u && u.parts.timeMs <= Date.now() + DAY_AHEAD);
  const rank = (u) => [u.key === hint ? 0 : 1, u.parts.sequence, u.parts.node, -u.parts.timeMs];
  return out.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
  });
}

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
};
const mono = (text) => el("span", { class: "mono" }, text);
const when = (ms) => new Date(ms).toISOString();
const local = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "long" });

function showDecoded() {
  const text = ui.input.value.trim();
  ui.decoded.textContent = "";
  ui.suggest.textContent = "";
  if (text === "") return;
  let read;
  try {
    read = readId(text);
  } catch (e) {
    ui.decoded.append(el("p", { class: "error" }, words(e.message)));
    return;
  }
  if (read.objectId) {
    showObjectId(read.objectId);
    return;
  }
  const { id } = read;
  const choice = ui.decodeLayout.value;
  const options = ranked(id, read.hint);
  if (choice === "auto") {
    if (options.length === 0) {
      ui.decoded.append(
        el(
          "p",
          { class: "error" },
          "No preset gives this ID a time in the past: pick its layout under “Made with”, or make a custom one under Make IDs.",
        ),
      );
      return;
    }
    if (options.length > 1) {
      // Several layouts fit: no single answer stated, the ranked choices instead.
      ui.suggest.append(
        el(
          "p",
          { id: "suggest-label" },
          `${options.length} layouts give this ID a time in the past. Pick the one it was made with (most likely first):`,
        ),
      );
      const list = el("ol", { class: "choices" });
      for (const o of options) {
        const b = el(
          "button",
          { type: "button", "data-layout": o.key },
          el("strong", {}, namesOf(o.key).title),
          ` ${when(o.parts.timeMs)} (${ago(o.parts.timeMs)}), ${whoText(o.key, o.parts)}`,
        );
        b.addEventListener("click", () => {
          ui.decodeLayout.value = o.key;
          showDecoded();
          showRange();
        });
        list.append(el("li", {}, b));
      }
      ui.suggest.append(list);
      return;
    }
  }
  const key = choice === "auto" ? options[0].key : choice;
  const u = underLayout(id, key);
  if (!u) {
    let why;
    let bits;
    try {
      const layout = key === "generator" ? selected().layout : presetLayout(key);
      bits = describeLayout(layout).totalBits;
      decode(id, layout);
    } catch (e) {
      why = words(e.message);
    }
    const title = namesOf(key).title;
    // A layout a Number holds: a larger ID may be one that lost precision as a Number.
    const text =
      bits <= 53 && id > MAX_SAFE_ID
        ? `${id} is above 2^53 - 1 (${MAX_SAFE_ID}), the largest ID a JavaScript Number holds exactly and the largest the ${title} layout makes: it was made with another layout, or it lost precision as a Number on its way here.`
        : `${why ?? "It does not fit"}: not an ID of the ${title} layout.`;
    ui.decoded.append(el("p", { class: "error" }, text));
    return;
  }
  showParts(id, read, u);
}

function showParts(id, read, { key, facts, parts: p }) {
  const names = namesOf(key);
  const title =
    key === "generator"
      ? `the layout chosen under Make IDs (${ui.layout.selectedOptions[0].textContent})`
      : `a ${names.title} ID`;
  const iso = when(p.timeMs);
  const rows = [
    ["Layout", key === "generator" ? ui.layout.selectedOptions[0].textContent : names.title],
    ["Time (UTC)", el("time", { datetime: iso }, iso)],
    ["Local time", local(p.timeMs)],
    ["Age", ago(p.timeMs)],
    ["Unix ms", mono(String(p.timeMs))],
  ];
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  if (p.datacenter !== undefined)
    rows.push([cap(names.datacenter), String(p.datacenter)], [cap(names.worker), String(p.worker)]);
  rows.push(["Node", String(p.node)], ["Sequence", String(p.sequence)]);
  rows.push(["Decimal", mono(id.toString())]);
  if (id >= 1n << 63n) rows.push(["Signed 64-bit", mono(BigInt.asIntN(64, id).toString())]);
  rows.push(["Hex", mono(id.toString(16).padStart(16, "0"))], ["Base32", mono(toBase32(id))]);
  const dl = el("dl", {}, ...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const read_ = [`read as ${read.form}`, read.note].filter(Boolean).join(", ");
  const summary = el(
    "p",
    { class: "summary" },
    `As ${title}: made `,
    el("span", { class: "nowrap" }, iso),
    ` (${ago(p.timeMs)}) by ${whoText(key, p)}`,
    el("span", { class: "muted" }, ` (${read_})`),
  );
  ui.decoded.append(summary);
  const ahead = p.timeMs - Date.now();
  if (ahead > DAY_AHEAD) {
    ui.decoded.append(
      el(
        "p",
        { class: "note" },
        `This time is ${ago(p.timeMs).replace(/^in /, "")} ahead of this device's clock: the ID was probably made with another layout.`,
      ),
    );
  } else if (ahead > 0) {
    ui.decoded.append(
      el(
        "p",
        { class: "note" },
        `This time is ${number.format(ahead)} ms ahead of this device's clock. A tick holds only so many IDs, so a big batch takes the next ticks early: its newest IDs are dated a little ahead (or the clock that made it was ahead).`,
      ),
    );
  }
  ui.decoded.append(dl, bitFigure(id, facts, p, names));
}

function showObjectId(oid) {
  const hex = oid.toString();
  const ms = oid.timestamp * 1000;
  const iso = when(ms);
  const rows = [
    ["Kind", "MongoDB ObjectId"],
    ["Time (UTC)", el("time", { datetime: iso }, iso)],
    ["Local time", local(ms)],
    ["Age", ago(ms)],
    ["Process (random, 5 bytes)", mono(hex.slice(8, 18))],
    ["Counter", mono(String(parseInt(hex.slice(18), 16)))],
    ["Hex", mono(hex)],
  ];
  ui.decoded.append(
    el(
      "p",
      { class: "summary" },
      "A MongoDB ObjectId: made ",
      el("span", { class: "nowrap" }, iso),
      ` (${ago(ms)})`,
      el("span", { class: "muted" }, " (seconds only; no node or sequence)"),
    ),
    el("dl", {}, ...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
  );
}

/** The time-to-ID-range converter: the smallest and largest ID of the tick holding a time. */
function showRange() {
  const text = ui.rangeTime.value.trim();
  ui.rangeOut.textContent = "";
  ui.rangeOut.classList.remove("error");
  if (text === "") return;
  const key = ui.decodeLayout.value;
  if (key === "auto") {
    ui.rangeOut.textContent = "Pick the layout under “Made with” first: each layout puts a time at other IDs.";
    return;
  }
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  try {
    if (!Number.isFinite(ms))
      throw new RangeError(`${JSON.stringify(text)} is neither an ISO time nor Unix milliseconds`);
    const layout = key === "generator" ? selected().layout : presetLayout(key);
    const lo = minIdAt(ms, layout);
    const hi = maxIdAt(ms, layout);
    ui.rangeOut.append(
      `IDs of the ${key === "generator" ? "chosen" : namesOf(key).title} layout made in the tick of ${when(ms)}: from `,
      mono(String(lo)),
      " to ",
      mono(String(hi)),
      ". Every ID made before it is smaller than the first; every ID made after it is larger than the last.",
    );
  } catch (e) {
    ui.rangeOut.classList.add("error");
    ui.rangeOut.textContent = words(e.message);
  }
}

const SHORT = {
  unused: "",
  time: "time",
  datacenter: "dc",
  worker: "wk",
  node: "node",
  sequence: "seq",
  process: "proc",
  machine: "mach",
  shard: "shrd",
};

/** The 64 bits in two rows of 32, each field coloured and labelled (for sighted users; the list above says the same in words). */
function bitFigure(id, facts, parts, names) {
  const fs = fields(facts, parts, names);
  const tick = (parts.timeMs - facts.epochMs) / facts.unitMs;
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
      cells.append(
        el("span", { class: `bit f-${f.name}`, title: `bit ${b}: ${f.label}` }, String((id >> BigInt(b)) & 1n)),
      );
    }
    for (const s of spans) {
      const hi = Math.min(s.high, top);
      const lo = Math.max(s.low, top - 31);
      if (hi < lo) continue;
      const width = hi - lo + 1;
      const text = width >= 8 ? s.label : width >= 2 ? (SHORT[s.label] ?? s.label.slice(0, width >= 4 ? 4 : 2)) : "";
      const label = el("span", { class: `label f-${s.name}`, style: `grid-column: span ${width}` }, text);
      labels.append(label);
    }
    const index = el("div", { class: "bitidx" }, el("span", {}, `bit ${top}`), el("span", {}, `bit ${top - 31}`));
    return [index, cells, labels];
  });
  const caption = `Bits 63 to 0: ${spans.map((s) => `${s.label} ${s.bits} ${s.bits === 1 ? "bit" : "bits"}${s.value === undefined ? "" : ` = ${s.value}`}`).join(", ")}.`;
  return el(
    "figure",
    { class: "figure" },
    el("div", { "aria-hidden": "true", class: "bitrows" }, ...rows.flat()),
    el("figcaption", {}, caption),
  );
}

// ---- preferences (layout, custom widths, count, lease URL and space), kept in localStorage ----

function savePrefs() {
  try {
    localStorage.setItem(
      PREFS,
      JSON.stringify({
        layout: ui.layout.value,
        count: ui.count.value,
        custom: customInputs.map((i) => i.value),
        lease: ui.leaseUrl.value.trim(),
        space: ui.leaseSpace.value.trim(),
      }),
    );
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
    if (typeof p.lease === "string" && p.lease !== "") {
      ui.leaseUrl.value = p.lease;
      ui.leaseSetting.open = true;
    }
    if (typeof p.space === "string" && p.space !== "") ui.leaseSpace.value = p.space;
    p.custom?.forEach((v, i) => {
      if (customInputs[i]) customInputs[i].value = v;
    });
  } catch {
    // nothing usable saved
  }
}

// ---- wiring ----

// Both layout lists offer the presets, named once in layouts.js, before their last option.
for (const select of [ui.decodeLayout, ui.layout]) {
  const presets = PRESETS.map((key) => new Option(namesOf(key).title, key));
  select.lastElementChild.before(...presets);
}
ui.layout.value = "default";
loadPrefs();
showLayout();
ui.layout.addEventListener("change", showLayout);
for (const i of customInputs) i.addEventListener("input", showLayout);
ui.form.addEventListener("submit", generate);
// A typed node id is only as safe as this browser's site data: say so where it is typed.
const warnTypedNode = () => {
  ui.nodeWarning.hidden = ui.node.value.trim() === "";
};
ui.node.addEventListener("input", warnTypedNode);
warnTypedNode();
ui.copyDec.addEventListener("click", () =>
  copy(Array.from(ids, String).join("\n"), `${number.format(ids.length)} IDs (decimal)`),
);
ui.copyB32.addEventListener("click", () =>
  copy(Array.from(ids, toBase32).join("\n"), `${number.format(ids.length)} IDs (base32)`),
);
ui.decodeLast.addEventListener("click", () => {
  ui.input.value = String(ids[ids.length - 1]);
  // A leased generator has its space's layout: its preset if it is one, else compare them.
  const leased = current?.gen.lease?.layout;
  const presets = [...ui.decodeLayout.options].map((o) => o.value);
  if (leased !== undefined) ui.decodeLayout.value = presets.includes(leased) ? leased : "auto";
  else ui.decodeLayout.value = ui.layout.value === "custom" ? "generator" : ui.layout.value;
  showDecoded();
  ui.input.focus();
});
ui.box.addEventListener("scroll", () => requestAnimationFrame(paint), { passive: true });
ui.input.addEventListener("input", showDecoded);
ui.decodeLayout.addEventListener("change", () => {
  showDecoded();
  showRange();
});
ui.rangeTime.addEventListener("input", showRange);

// ---- sealed IDs: opened here with a pasted key (snowdrift/seal, loaded on first use) ----

const seal = { form: $("seal-form"), key: $("seal-key"), tweak: $("seal-tweak"), width: $("seal-width") };
seal.input = $("seal-input");
seal.out = $("seal-out");
// The layouts by width, as the core has them: a sealer reads only that.
for (const fits of [true, false]) {
  const names = PRESETS.filter((k) => layoutInfo(presetLayout(k)).fitsI64 === fits).map((k) => namesOf(k).title);
  seal.width.add(new Option(`${fits ? 63 : 64} bits: ${names.join(", ")}`, String(fits)));
}
/** The text forms a sealed ID may be in, told by its length: all digits in 11 or 13
 * characters may be decimal or base62 / base32, so both are tried and shown. */
function sealedForms(t) {
  const coded = t.length === 13 ? "base32" : "base62";
  if (/^\d+$/.test(t)) return t.length === 11 || t.length === 13 ? [coded, "decimal"] : ["decimal"];
  return [coded];
}
seal.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  seal.out.replaceChildren();
  try {
    const { Sealer } = await import("./seal.js");
    const text = seal.input.value.trim().replaceAll("-", "");
    const sealer = new Sealer(seal.key.value.trim(), {
      layout: { fitsI64: seal.width.value === "true" },
      tweak: seal.tweak.value.trim(),
    });
    try {
      const forms = sealedForms(text);
      const opened = [];
      let error;
      for (const form of forms) {
        try {
          opened.push([form, sealer.openString(text, form)]);
        } catch (e) {
          error ??= e;
        }
      }
      if (opened.length === 0) throw error;
      opened.forEach(([form, id], i) => {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = "Decode it";
        button.addEventListener("click", () => {
          ui.input.value = String(id);
          showDecoded();
          ui.input.focus();
        });
        const as = forms.length > 1 ? `as ${form}, ` : "";
        seal.out.append(`${i > 0 ? "; " : ""}${as}opens to ID ${id} `, button);
      });
    } finally {
      sealer.free();
    }
  } catch (e) {
    seal.out.textContent = e.message;
    seal.out.classList.add("error");
    return;
  }
  seal.out.classList.remove("error");
});
document.documentElement.dataset.ready = "true";

// Offline: the service worker keeps the page's files; say when that is done.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("sw.js").catch((e) => {
    ui.offline.textContent = `Works only online here: the browser refused to keep this page for offline use (${e.message}).`;
  });
  navigator.serviceWorker.ready.then(() => {
    ui.offline.textContent = "Ready to work offline: this page and its files are kept in this browser.";
    document.documentElement.dataset.offline = "ready";
  });
} else {
  ui.offline.textContent = "Works only online here: offline use needs https:// or http://localhost.";
}
