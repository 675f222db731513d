// The lease client, a script of its own: the page imports it only when a lease URL is set.
export { openLeased } from "snowdrift/browser-lease";
