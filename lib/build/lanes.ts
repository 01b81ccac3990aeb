import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * Runs several commands at once, as one: each line any of them prints is
 * marked with its name, a signal that stops this process stops them all,
 * and it settles once every one has ended. `npm test` runs its Vitest
 * lanes this way (scripts/vitest-lanes.mts), because Vitest itself runs
 * every file of projects that run one file at a time in one queue.
 */
export interface Lane {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

export interface LaneResult {
  name: string;
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  seconds: number;
}

export interface LaneOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

const toConsole: LaneOutput = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

export async function runLanes(
  lanes: readonly Lane[],
  output: LaneOutput = toConsole,
): Promise<LaneResult[]> {
  const width = Math.max(...lanes.map((lane) => lane.name.length));
  const children = lanes.map((lane) => {
    const child = spawn(lane.command, lane.args, {
      env: lane.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const label = `[${lane.name}]`.padEnd(width + 3);
    const linesDone = [
      ["stdout", child.stdout],
      ["stderr", child.stderr],
    ].map(([stream, readable]) => {
      const lines = createInterface({
        input: readable as NodeJS.ReadableStream,
        crlfDelay: Infinity,
      });
      lines.on("line", (line) => output[stream as keyof LaneOutput](`${label}${line}`));
      return new Promise((resolve) => lines.once("close", resolve));
    });
    return { lane, child, linesDone };
  });

  // Ctrl-C reaches every lane by itself (they share the terminal's process
  // group, and a second SIGINT would make Vitest skip its teardown), so
  // SIGINT is only kept from ending this process before they have; a
  // SIGTERM, sent to this process alone, is passed on.
  const keepWaiting = () => undefined;
  const passOn = () => {
    for (const { child } of children) if (child.exitCode === null) child.kill("SIGTERM");
  };
  process.on("SIGINT", keepWaiting).on("SIGTERM", passOn);

  const startedAt = performance.now();
  try {
    return await Promise.all(
      children.map(async ({ lane, child, linesDone }) => {
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>(
          (resolve, reject) => {
            child.once("error", reject);
            child.once("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
          },
        );
        const seconds = (performance.now() - startedAt) / 1000;
        await Promise.all(linesDone);
        return { name: lane.name, code, signal, seconds };
      }),
    );
  } finally {
    process.off("SIGINT", keepWaiting).off("SIGTERM", passOn);
  }
}
