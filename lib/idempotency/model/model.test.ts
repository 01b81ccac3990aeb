import { describe, expect, it } from "vitest";
import {
  BROKEN_VARIANTS,
  checkModel,
  type BrokenVariant,
  type PanReport,
} from "@/lib/idempotency/model/run-spin";

// The real model's search takes a few seconds on an idle two-core machine;
// the margin is for a busy one.
const REAL_MODEL_TIMEOUT_MS = 240_000;
const BROKEN_MODEL_TIMEOUT_MS = 60_000;

// A model that stops early (a process blocked at its first step, a guard that
// can never hold) passes every assertion it never reaches. The real search
// stores about 950,000 states; far fewer means the model lost its
// behaviour, not that it got faster.
const FEWEST_STATES_OF_THE_REAL_MODEL = 400_000;

function figures(name: string, report: PanReport): string {
  const trail =
    report.trailSteps === undefined
      ? ""
      : `, counterexample of ${report.trailSteps} steps breaks ${report.violatedAssertion}`;
  return `${name}: errors ${report.errors}, ${report.statesStored} states stored, ${report.transitions} transitions, depth ${report.depthReached}, ${report.elapsedSeconds} s${trail}`;
}

describe("the protocol model (SPIN)", () => {
  it(
    "never charges twice, never writes two orders, and leaves no charge without its order",
    async () => {
      const report = await checkModel();
      console.info(figures("idempotency.pml", report));
      expect(report.output).not.toContain("max search depth too small");
      expect(report.output).toContain("Full statespace search");
      expect(report.violatedAssertion).toBeUndefined();
      expect(report.errors, report.output).toBe(0);
      expect(report.statesStored).toBeGreaterThan(FEWEST_STATES_OF_THE_REAL_MODEL);
    },
    REAL_MODEL_TIMEOUT_MS,
  );

  for (const [variant, brokenProperty] of Object.entries(BROKEN_VARIANTS) as [
    BrokenVariant,
    string,
  ][]) {
    it(
      `finds a counterexample when broken with ${variant} (${brokenProperty} fails)`,
      async () => {
        const report = await checkModel(variant);
        console.info(figures(`idempotency.pml -D${variant}`, report));
        expect(report.errors).toBeGreaterThan(0);
        expect(report.violatedAssertion).toBe(brokenProperty);
        // The trail replays to the same failure: the counterexample is real, not an artefact of the search.
        expect(report.trailReplay).toContain("assertion violated");
        expect(report.trailReplay?.replace(/[\s()]/g, "")).toContain(
          `failedassertion:assert${brokenProperty}`,
        );
      },
      BROKEN_MODEL_TIMEOUT_MS,
    );
  }
});
