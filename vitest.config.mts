import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["lib/**/*.test.ts", "scripts/**/*.test.ts"],
    // Playwright specs live in e2e/ and crash Vitest if collected.
    exclude: ["e2e/**", "node_modules/**", ".next/**"],
    // The run's folder and mark first, so that its end comes after every
    // other teardown (lib/testing/test-run.ts); then the shared app.
    globalSetup: ["lib/testing/test-run-setup.ts", "lib/testing/global-setup.ts"],
    // Every answer of the shared test app is judged by its OpenAPI document.
    setupFiles: ["lib/testing/openapi-setup.ts"],
    // The usual report, then how many tests were skipped and why.
    reporters: ["default", "./lib/testing/skip-summary-reporter.ts"],
    // Database tests share one server and database; running files one at a
    // time keeps row counts per test meaningful and the output readable.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
