import { minutesAndSeconds } from "../build/phase-times";

/** One test file's wall time, and the Vitest lane it ran in. */
export interface FileTime {
  file: string;
  lane: string;
  seconds: number;
}

/** The slowest files first, at most `shown` of them, one per line, under a heading that says how many. */
export function formatFileTimes(times: readonly FileTime[], shown: number): string {
  const slowest = [...times].sort((a, b) => b.seconds - a.seconds).slice(0, shown);
  const lines = slowest.map(
    ({ file, lane, seconds }) =>
      `  ${minutesAndSeconds(seconds).padStart(10)}  ${file}${lane ? ` (${lane})` : ""}`,
  );
  return [`[tests] the ${slowest.length} slowest files:`, ...lines].join("\n");
}
