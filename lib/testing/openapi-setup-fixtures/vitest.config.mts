import path from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Runs the fixtures of openapi-setup.test.ts under the contract check, as
 * the suite runs every test file, but with no app of its own: each fixture
 * starts the stand-in app it talks to.
 */
const root = path.resolve(import.meta.dirname, "../../..");

export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    include: ["lib/testing/openapi-setup-fixtures/*.fixture.ts"],
    setupFiles: ["lib/testing/openapi-setup.ts"],
    // The setup file judges the shared app's answers too; these fixtures talk to none.
    provide: { baseUrl: "http://127.0.0.1:9" },
    fileParallelism: false,
  },
});
