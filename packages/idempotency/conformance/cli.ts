/**
 * Grades a running fixture (`npm run fixture` prints its URL):
 *
 *   node --import tsx packages/idempotency/conformance/cli.ts <url> [core|profile ...]
 *
 * Both tiers when none is named. Exits 1 when a vector of a named tier did
 * not pass: the profile tier encodes another library's choices, several of
 * which OncePay makes differently (DESIGN.md), so expect failures there.
 */
import { formatResults, loadVectors, runVectors, type Tier } from "./runner.js";

const [url, ...named] = process.argv.slice(2);
const tiers = (named.length > 0 ? named : ["core", "profile"]) as Tier[];
if (!url || tiers.some((tier) => tier !== "core" && tier !== "profile")) {
  console.error("usage: cli.ts <url> [core|profile ...]");
  process.exit(2);
}
let passed = true;
for (const tier of tiers) {
  const results = await runVectors(url, await loadVectors(tier));
  console.log(`${tier}:\n${formatResults(results)}`);
  passed &&= results.every((result) => result.status !== "fail" && result.status !== "error");
}
process.exit(passed ? 0 : 1);
