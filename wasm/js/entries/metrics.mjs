// `snowdrift/metrics`: what every lease of the process reports (src/lease/metrics.mjs), as
// Prometheus text or as metric families, and the names of its diagnostics channels.
export {
  CHANNELS,
  EVENTS,
  PROMETHEUS_CONTENT_TYPE,
  STATES,
  collect,
  freeIds,
  prometheusText,
  recordListing,
} from "../src/lease/metrics.mjs";
