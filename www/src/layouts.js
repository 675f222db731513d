// Layouts as the page shows them: field widths, tick, epoch and end, as the core has them
// (`layoutInfo`, so the page and the core can never disagree), and
// the 64 bits of an ID split into labelled fields.
import { BROWSER_LAYOUT, layoutInfo } from "snowdrift/browser";

export const PRESETS = ["default", "twitter", "discord", "sonyflake", "instagram", "baidu", "js53", "browser"];

/** How people call each preset and its fields (Discord's documentation says worker and
 * process; Sonyflake's machine; Instagram's shard; Baidu's worker). */
export const PRESET_NAMES = {
  default: { title: "snowdrift default", node: "node" },
  twitter: { title: "Twitter", datacenter: "datacenter", worker: "worker" },
  discord: { title: "Discord", datacenter: "worker", worker: "process" },
  sonyflake: { title: "Sonyflake", node: "machine" },
  instagram: { title: "Instagram", node: "shard" },
  baidu: { title: "Baidu uid-generator", node: "worker" },
  js53: { title: "JavaScript-safe (53-bit)", node: "node" },
  browser: { title: "Many devices (16-bit node)", node: "node" },
};
const CUSTOM_NAMES = { title: "custom", node: "node", datacenter: "datacenter", worker: "worker" };

/** The names of a layout's fields for people: { title, node, datacenter, worker }. */
export const namesOf = (key) => PRESET_NAMES[key] ?? CUSTOM_NAMES;

/** The package layout for a select value (custom layouts come from the form). */
export const presetLayout = (key) => (key === "browser" ? BROWSER_LAYOUT : key);

/** Widths and times of a layout, from the core (`layoutInfo`), plus `nodeLow` (Sonyflake:
 * the node in the lowest bits, under the sequence); throws the core's RangeError for an
 * invalid one. */
export function describeLayout(layout) {
  const info = layoutInfo(layout);
  return { ...info, nodeLow: info.order === "sequence-node" && info.nodeBits > 0 };
}

const unitText = (ms) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
const day = (ms) => new Date(ms).toISOString().slice(0, 10);

/** One line for people: "41-bit time (1 ms since 2024-01-01) · 10-bit node · ...". */
export function layoutSummary(d, names = CUSTOM_NAMES) {
  const node = d.split
    ? `${d.datacenterBits}+${d.workerBits}-bit ${names.datacenter}+${names.worker}`
    : `${d.nodeBits}-bit ${names.node}`;
  const parts = [`${d.timeBits}-bit time (${unitText(d.unitMs)} ticks since ${day(d.epochMs)})`];
  const tail = [node, `${d.sequenceBits}-bit sequence`];
  parts.push(...(d.nodeLow ? tail.reverse() : tail));
  const runsOut =
    d.exhaustsAtMs <= Date.now() ? `ran out ${day(d.exhaustsAtMs)}` : `lasts until ${day(d.exhaustsAtMs)}`;
  return `${parts.join(" · ")} · ${d.totalBits} bits · ${runsOut}`;
}

/** The fields from bit 63 down: { name, label, bits, value } (`name` the field's role,
 * `label` what the layout calls it, `value` of the ID's bits, a number). */
export function fields(d, parts, names = CUSTOM_NAMES) {
  const out = [];
  if (d.totalBits < 64) out.push({ name: "unused", label: "unused", bits: 64 - d.totalBits });
  out.push({ name: "time", label: "time", bits: d.timeBits });
  const node = d.split
    ? [
        { name: "datacenter", label: names.datacenter, bits: d.datacenterBits, value: parts.datacenter },
        { name: "worker", label: names.worker, bits: d.workerBits, value: parts.worker },
      ]
    : [{ name: "node", label: names.node, bits: d.nodeBits, value: parts.node }];
  const sequence = { name: "sequence", label: "sequence", bits: d.sequenceBits, value: parts.sequence };
  out.push(...(d.nodeLow ? [sequence, ...node] : [...node, sequence]));
  return out.filter((f) => f.bits > 0);
}
