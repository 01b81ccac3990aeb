/**
 * How long each phase of a test run took (install, typecheck, lint, format,
 * build, Vitest, Playwright), kept one phase per line, `<name>\t<seconds>`,
 * so that `npm test` and CI's own steps can add to one file, and printed as
 * a table with the total.
 */
export interface PhaseTime {
  phase: string;
  seconds: number;
}

export function parsePhaseTimes(text: string): PhaseTime[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [phase, seconds] = line.split("\t");
      const value = Number(seconds);
      if (!phase || seconds === undefined || !Number.isFinite(value))
        throw new Error(`Not a phase time ("<name>\\t<seconds>"): ${JSON.stringify(line)}`);
      return { phase, seconds: value };
    });
}

export function formatPhaseTimes(times: readonly PhaseTime[]): string {
  const total = times.reduce((sum, time) => sum + time.seconds, 0);
  const rows = [...times, { phase: "total", seconds: total }];
  const nameWidth = Math.max(...rows.map((row) => row.phase.length));
  const timeWidth = Math.max(...rows.map((row) => minutesAndSeconds(row.seconds).length));
  return rows
    .map(
      (row) =>
        `  ${row.phase.padEnd(nameWidth)}  ${minutesAndSeconds(row.seconds).padStart(timeWidth)}`,
    )
    .join("\n");
}

/** 754.2 → "12 min 34 s"; under a minute, "41 s". */
export function minutesAndSeconds(seconds: number): string {
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes === 0 ? `${whole} s` : `${minutes} min ${whole % 60} s`;
}
