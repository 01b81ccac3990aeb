import { defineConfig } from "vitest/config";

// Each test file opens a database of its own (test/support/database.ts),
// so files run side by side.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
