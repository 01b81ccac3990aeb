/**
 * `npm run test:unit`: Vitest's three lanes (vitest.config.mts) at the
 * same time, one Vitest process each, every line marked with its lane; it
 * fails if any fails. One file or one lane runs as usual, with
 * `npx vitest run <file>` or `npx vitest run --project <lane>`.
 */
import path from "node:path";
import { drop, laneDatabaseUrl, makeFresh } from "../lib/build/lane-databases.ts";
import { runLanes } from "../lib/build/lanes.ts";
import { minutesAndSeconds } from "../lib/build/phase-times.ts";
import { PORT_SLICE_ENV, portSlices } from "../lib/process/free-port.ts";

/** The projects of vitest.config.mts. */
const LANES = ["shared", "own-app", "own-postgres"];
const vitest = path.resolve("node_modules", "vitest", "vitest.mjs");
// Colours as in a terminal, though each lane writes into a pipe.
const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env;

// On PostgreSQL, a database of its own for each lane but the shared one
// (lib/build/lane-databases.ts).
const databaseUrl = process.env.DATABASE_URL;
const laneDatabases = new Map(
  databaseUrl
    ? LANES.filter((lane) => lane !== "shared").map((lane) => [
        lane,
        laneDatabaseUrl(databaseUrl, lane),
      ])
    : [],
);
if (databaseUrl) await makeFresh(databaseUrl, [...laneDatabases.values()]);

// Ports of their own too (lib/process/free-port.ts).
const slices = portSlices(LANES.length);
const results = await runLanes(
  LANES.map((name, index) => ({
    name,
    command: process.execPath,
    args: [vitest, "run", "--project", name, ...process.argv.slice(2)],
    env: {
      ...env,
      [PORT_SLICE_ENV]: slices[index],
      ...(laneDatabases.has(name) && { DATABASE_URL: laneDatabases.get(name) }),
    },
  })),
);
if (databaseUrl) await drop(databaseUrl, [...laneDatabases.values()]);
const failed = results.filter((result) => result.code !== 0);
console.log(
  `\n[tests] ${results
    .map(
      (result) =>
        `${result.name} lane: ${result.code === 0 ? "passed" : `failed (${result.signal ?? `exit code ${result.code}`})`} in ${minutesAndSeconds(result.seconds)}`,
    )
    .join("; ")}`,
);
process.exit(failed.length > 0 ? 1 : 0);
