/**
 * Prints the phase times a test run kept in a file (scripts/test-all.mts
 * writes them, CI adds its install): `node --import tsx scripts/phase-times.mts <file> [title]`.
 */
import { readFileSync } from "node:fs";
import { formatPhaseTimes, parsePhaseTimes } from "../lib/build/phase-times.ts";

const [file, title = "phase times"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node --import tsx scripts/phase-times.mts <file> [title]");
  process.exit(2);
}
console.log(`${title}:\n${formatPhaseTimes(parsePhaseTimes(readFileSync(file, "utf8")))}`);
