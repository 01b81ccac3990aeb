/** A number of seconds as people say it: `24 hours`, `30 s`. On its own, so the e2e specs can say it too. */
export function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? "" : "s"}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? "" : "s"}`;
  return `${seconds} s`;
}
