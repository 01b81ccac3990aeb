import path from "node:path";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * Three lanes (projects), each one file after another. `npm test` runs them
 * at the same time, one Vitest process each (scripts/vitest-lanes.mts): in
 * one process Vitest would put them in one queue, since it runs every file
 * of projects that take one file at a time one after another. No test may
 * depend on how busy the machine is (docs/testing.md), so each lane's files
 * neither disturb the others' nor are disturbed by them; on a 2-core
 * machine the restarts, failovers and waits of the last two lanes become
 * time the first uses anyway.
 *
 * "shared": the files that use what the global setup starts: the app, its
 * database (inject("databaseUrl"), the shared app's own on the embedded
 * database) or its payment simulator. One at a time, so that each test's
 * row counts and the simulator's settings stay its own.
 *
 * "own-app": the files that start the app they use, with a payment
 * simulator of its own (at most the run's lab key stores are shared, where
 * each leaves only its own account's keys), and count only the accounts
 * they create. On the embedded database also a few long files that use
 * nothing the global setup starts (databases of their own, a process, the
 * model checker): there the crash matrix runs once per point, and the
 * shared lane ran on alone for a minute and a half after this one had
 * ended, on one core of two. On PostgreSQL the crash matrix fills it.
 *
 * "own-postgres": the files that start PostgreSQL servers of their own (to
 * crash, under Patroni) or a cluster around the one under test (PgBouncer,
 * HAProxy, several instances) on the lane's database (inject("databaseUrl")
 * is its DATABASE_URL). They need a PostgreSQL server, so on the embedded
 * database they are skipped.
 *
 * On PostgreSQL, `npm test` gives the last two lanes a database each of
 * their own (lib/build/lane-databases.ts): their apps run the recovery
 * worker and the reaper, which would take over the shared lane's keys.
 */
const OWN_APP_FILES = [
  "lib/idempotency/crash-matrix.test.ts",
  "lib/process/launcher-shutdown.test.ts",
  "lib/db/embedded-restart.test.ts",
  "lib/testing/ownership.test.ts",
  "lib/testing/soak/soak.test.ts",
  "lib/api/lab-designs.contract.test.ts",
  "lib/api/rate-limits.contract.test.ts",
  "lib/api/demo-faults-off.contract.test.ts",
  "lib/api/lab-key-stores-down.contract.test.ts",
  "lib/observability/log-context.contract.test.ts",
  "lib/http/connection-flood.test.ts",
  "lib/payments/pending-recovery.test.ts",
  // Nothing of the global setup's: here to even the lanes out (see above).
  ...(process.env.DATABASE_URL
    ? []
    : [
        "lib/db/schema-drift.test.ts",
        "lib/process/follow-launcher.test.ts",
        "lib/idempotency/model/model.test.ts",
      ]),
];
const OWN_POSTGRES_FILES = [
  "lib/cluster/failover.test.ts",
  "lib/cluster/patroni-start.test.ts",
  "lib/cluster/cluster.test.ts",
  "lib/cluster/cluster-shutdown.test.ts",
  "lib/cluster/pooler-safety.test.ts",
  "lib/idempotency/postgres-crash.test.ts",
];

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
      // A poll waits for something that will happen; how soon depends on
      // how busy the machine is, and Vitest's own default is one second.
      expect: { poll: { timeout: 20_000 } },
      hookTimeout: 120_000,
    },
  } satisfies TestProjectInlineConfiguration;
}

export default defineConfig({
  resolve: { alias },
  test: {
    // The run's folder and mark first, so that its end comes after every
    // other teardown (lib/testing/test-run.ts); then the lab's key stores,
    // and the shared app when the shared lane runs (inject()).
    globalSetup: ["lib/testing/test-run-setup.ts", "lib/testing/global-setup.ts"],
    // The usual report, then how many tests were skipped and why, then the slowest files.
    reporters: [
      "default",
      "./lib/testing/skip-summary-reporter.ts",
      "./lib/testing/file-times-reporter.ts",
    ],
    // A lane at a time in one process (see above); npm test runs a process per lane.
    maxWorkers: 1,
    projects: [
      lane("shared", {
        include: ["lib/**/*.test.ts", "scripts/**/*.test.ts"],
        exclude: [...exclude, ...OWN_APP_FILES, ...OWN_POSTGRES_FILES],
      }),
      lane("own-app", { include: OWN_APP_FILES, exclude }),
      lane("own-postgres", { include: OWN_POSTGRES_FILES, exclude }),
    ],
  },
});
