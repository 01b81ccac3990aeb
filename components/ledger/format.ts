/** A moment as the ledger pages show it: the same on the server and in every browser (UTC, to the second, or to the millisecond where steps follow each other closely). */
export function formatInstant(
  iso: string,
  precision: "seconds" | "milliseconds" = "seconds",
): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, precision === "seconds" ? 19 : 23)} UTC`;
}

/** The path of a key's page: the key is one path segment, percent-encoded. */
export function keyPagePath(key: string): string {
  return `/keys/${encodeURIComponent(key)}`;
}

/** The time of day alone, to the millisecond (UTC), for moments listed under one date. */
export function formatTime(iso: string): string {
  return `${iso.slice(11, 23)} UTC`;
}
