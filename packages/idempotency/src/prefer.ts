/**
 * `Prefer: wait=N` (RFC 7240): how many seconds the client will wait for an
 * answer. Preferences are hints, so one that cannot be read is ignored, as
 * the RFC asks: undefined, and nothing waits. Other preferences (and their
 * parameters) beside it, in one field or several, are skipped; the first
 * `wait` counts.
 */
export function preferredWaitSeconds(fields: string | null): number | undefined {
  if (fields === null) return undefined;
  for (const preference of fields.split(",")) {
    const [token = "", ...value] = preference.split(";")[0]!.split("=");
    if (token.trim().toLowerCase() !== "wait") continue;
    const seconds = value
      .join("=")
      .trim()
      .replace(/^"(.*)"$/, "$1");
    return /^\d{1,6}$/.test(seconds) ? Number(seconds) : undefined;
  }
  return undefined;
}

/** The answer's word that the server honoured the wait, and for how long it would have (whole seconds). */
export function preferenceAppliedWait(upToMs: number): string {
  return `wait=${Math.ceil(upToMs / 1000)}`;
}
