import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { E2E_LAB_KEY_EXPIRY_SECONDS, E2E_LEASE_SECONDS } from "./e2e/server-timings";
import {
  E2E_DATABASE_URL_FILE,
  E2E_SIMULATOR_ADMIN_KEY_FILE,
  e2eSimulatorPort,
} from "./lib/testing/e2e/paths";

const port = Number(process.env.E2E_PORT ?? 3300);

// One folder for the run's embedded database. Every process of the run
// reads this file (the runner, then each worker it starts): the runner
// makes the folder, its workers find it in the environment they inherit,
// and it goes when the runner exits. Made here, in each of them, it was
// four folders a run, none ever removed.
if (!process.env.ONCEPAY_E2E_DIR) {
  const folder = mkdtempSync(path.join(tmpdir(), "oncepay-e2e-"));
  process.env.ONCEPAY_E2E_DIR = folder;
  process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
}
const baseURL = `http://127.0.0.1:${port}`;

// Debian's Chromium, never a downloaded browser. Without the background
// networking flags it keeps trying to reach Google's hosts, which a closed
// network refuses.
const chromium = {
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
  ],
};

const BALANCER_SPEC = "lab-http2.spec.ts";

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  // Two files at a time. Every spec counts only its own browser's account
  // (a session per context), so specs may share the app and its database;
  // a file's tests still run in order.
  workers: 2,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 60_000,
  reporter: [["list"], ["html", { open: "never", outputFolder: "playwright-report" }]],
  use: {
    baseURL,
    headless: true,
    trace: "retain-on-failure",
    launchOptions: chromium,
  },
  projects: [
    {
      name: "chromium",
      testIgnore: BALANCER_SPEC,
      use: { ...devices["Desktop Chrome"], launchOptions: chromium },
    },
    // The balancer's storms slow the payment simulator for every account
    // while they run (its fault settings are the simulator's own), so they
    // come after everything else, alone. To run this file by itself:
    // `npx playwright test e2e/lab-http2.spec.ts --no-deps`.
    {
      name: "balancer",
      testMatch: BALANCER_SPEC,
      dependencies: ["chromium"],
      use: { ...devices["Desktop Chrome"], launchOptions: chromium },
    },
  ],
  webServer: {
    command: "node --import tsx scripts/launch.mts start",
    // Ready: the database answers (the launcher has started the payment
    // simulator before Next.js; readiness never asks the provider).
    url: `${baseURL}/api/ready`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      DEMO_FAULTS: "on",
      IDEMPOTENCY_LEASE_SECONDS: String(E2E_LEASE_SECONDS),
      LAB_KEY_EXPIRY_SECONDS: String(E2E_LAB_KEY_EXPIRY_SECONDS),
      LOG_LEVEL: "warn",
      NEXT_TELEMETRY_DISABLED: "1",
      DATABASE_URL_FILE: E2E_DATABASE_URL_FILE,
      SIMULATOR_PORT: String(e2eSimulatorPort(port)),
      SIMULATOR_ADMIN_KEY_FILE: E2E_SIMULATOR_ADMIN_KEY_FILE,
      STRIPE_WEBHOOK_SECRET_FILE: path.join(process.env.ONCEPAY_E2E_DIR, "stripe-webhook-secret"),
      // Used only when DATABASE_URL is unset: a fresh embedded database per run.
      EMBEDDED_DATA_DIR:
        process.env.EMBEDDED_DATA_DIR ?? path.join(process.env.ONCEPAY_E2E_DIR, "pglite"),
    },
  },
});
