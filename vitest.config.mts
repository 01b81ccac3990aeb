import path from "node:path";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * Two lanes, run at the same time, each one file after another.
 *
 * "shared": nearly every file. They share one app, one database and one
 * payment simulator (the global setup's), so running them one at a time
 * keeps each test's row counts and the simulator's settings its own.
 *
 * "alongside": the few long files that start every server they use, count
 * only the accounts they create, and assert nothing about time, so they can
 * run beside the shared lane without disturbing it or being disturbed by it:
 * on a 2-core machine this turns minutes of restarts and failovers that
 * mostly wait into time the shared lane uses anyway.
 */
const ALONGSIDE = ["lib/idempotency/crash-matrix.test.ts", "lib/cluster/failover.test.ts"];

const alias = { "@": path.resolve(import.meta.dirname) };
// Playwright specs live in e2e/ and crash Vitest if collected.
const exclude = ["e2e/**", "node_modules/**", ".next/**"];

function lane(name: string, files: { include: string[]; exclude: string[] }) {
  return {
    resolve: { alias },
    test: {
      name,
      ...files,
      // Every answer of an app the tests start is judged by its OpenAPI document.
      setupFiles: ["lib/testing/openapi-setup.ts"],
      fileParallelism: false,
      testTimeout: 30_000,
      hookTimeout: 120_000,
    },
  } satisfies TestProjectInlineConfiguration;
}

export default defineConfig({
  resolve: { alias },
  test: {
    // The run's folder and mark first, so that its end comes after every
    // other teardown (lib/testing/test-run.ts); then one shared app for the
    // whole run, for both lanes (inject()).
    globalSetup: ["lib/testing/test-run-setup.ts", "lib/testing/global-setup.ts"],
    // The usual report, then how many tests were skipped and why, then the slowest files.
    reporters: [
      "default",
      "./lib/testing/skip-summary-reporter.ts",
      "./lib/testing/file-times-reporter.ts",
    ],
    // One worker per lane.
    maxWorkers: 2,
    projects: [
      lane("shared", {
        include: ["lib/**/*.test.ts", "scripts/**/*.test.ts"],
        exclude: [...exclude, ...ALONGSIDE],
      }),
      lane("alongside", { include: ALONGSIDE, exclude }),
    ],
  },
});
