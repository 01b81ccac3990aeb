import type { Reporter, TestModule } from "vitest/node";
import { SERVER_ONLY_TAG } from "./server-only-tag";

/**
 * Says at the end of a Vitest run how many tests were skipped and why. The
 * only skip this project allows is a test that needs a PostgreSQL server,
 * run on the embedded database (postgres-server-only.ts); a test skipped for
 * any other reason (a `.skip` left behind, a `.todo`) fails the run.
 */
export default class SkipSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const byReason = new Map<string, Set<string>>();
    const unexplained: string[] = [];
    let skipped = 0;
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests("skipped")) {
        skipped += 1;
        const reason = SERVER_ONLY_TAG.exec(test.fullName)?.[1];
        if (reason === undefined)
          unexplained.push(`${testModule.relativeModuleId} > ${test.fullName}`);
        else
          byReason.set(
            reason,
            (byReason.get(reason) ?? new Set()).add(
              `${testModule.relativeModuleId} > ${test.fullName.replace(SERVER_ONLY_TAG, "")}`,
            ),
          );
      }
    }
    const lines = [`[tests] ${skipped} skipped${skipped === 0 ? "" : ", by reason:"}`];
    for (const [reason, tests] of byReason) {
      lines.push(
        `  ${tests.size} ${tests.size === 1 ? "needs" : "need"} ${reason}:`,
        ...[...tests].map((test) => `    - ${test}`),
      );
    }
    if (unexplained.length > 0) {
      lines.push(
        `  ${unexplained.length} skipped with no reason (a .skip or .todo left behind?):`,
        ...unexplained.map((test) => `    - ${test}`),
      );
      process.exitCode = 1;
    }
    console.log(`\n${lines.join("\n")}`);
  }
}
