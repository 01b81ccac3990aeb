import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * The fixtures of lib/testing/ownership.test.ts, run by it in a Vitest of
 * their own: `*.fixture.ts`, which the project's own run never collects.
 * Only the run's folder and mark are set up (no shared app), as in the
 * project's config.
 */
const root = path.resolve(import.meta.dirname, "../../..");

export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    include: ["lib/testing/ownership-fixtures/*.fixture.ts"],
    globalSetup: ["lib/testing/test-run-setup.ts"],
    hookTimeout: 120_000,
  },
});
