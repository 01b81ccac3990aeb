/**
 * How the lab's charges are found again at the payment provider: by their
 * provider key's prefix (every lab charge) and by the storm in their
 * metadata (a storm's). No imports, so tests and the browser-free e2e
 * wiring can share it.
 */

/** What every lab charge's provider key starts with: `lab:<strategy>:<uuid>`. */
export const LAB_PROVIDER_KEY_PREFIX = "lab:";

/** Sent with every lab charge of a storm, so the storm's report can count them at the provider. */
export const LAB_STORM_METADATA = "oncepay_lab_storm";
