import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FORCED_EXIT_AFTER_MS, LAUNCHER_PID_ENV, whenProcessEnds } from "@/lib/process/follow-launcher";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

describe("whenProcessEnds", () => {
  it("waits while the process runs and calls back once it is gone", async () => {
    const watched = spawn("sleep", ["60"], { stdio: "ignore" });
    const exited = new Promise((resolve) => watched.once("exit", resolve));
    let calls = 0;
    const stop = whenProcessEnds(watched.pid!, () => calls++, 20);
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(calls).toBe(0);
      watched.kill("SIGKILL");
      await exited;
      await expect.poll(() => calls, { timeout: 2000, interval: 20 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(calls).toBe(1);
    } finally {
      stop();
      watched.kill("SIGKILL");
    }
  });
});

describe("a launcher killed outright", () => {
  let server: AppServer | undefined;
  afterEach(async () => {
    await server?.stop();
  });

  it("takes Next.js and the payment simulator with it: both ports close within seconds", async () => {
    server = await startAppServer();
    const pid = Number(/\[oncepay\] launcher: pid (\d+)/.exec(server.output())?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(await answers(`${server.baseUrl}/api/products`)).toBe(true);
    expect(await answers(server.paymentSimulatorUrl)).toBe(true);

    // SIGKILL: the launcher runs no handler, so nothing of its own stops the children.
    process.kill(pid, "SIGKILL");

    await expect.poll(() => answers(`${server!.baseUrl}/api/products`), { timeout: 10_000, interval: 200 }).toBe(false);
    await expect.poll(() => answers(server!.paymentSimulatorUrl), { timeout: 10_000, interval: 200 }).toBe(false);
  });
});

describe("a child whose SIGTERM never finishes", () => {
  it("exits anyway, FORCED_EXIT_AFTER_MS after the launcher is gone", async () => {
    const launcher = spawn("sleep", ["60"], { stdio: "ignore" });
    const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "lib/testing/ignores-sigterm.mts"], {
      env: { ...process.env, [LAUNCHER_PID_ENV]: String(launcher.pid) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await expect.poll(() => output, { timeout: 10_000, interval: 50 }).toContain("ready");
      launcher.kill("SIGKILL");
      const killedAt = performance.now();
      expect(await exited).toBe(1);
      // The SIGTERM reached it and was not enough; the forced exit came after the grace, not before.
      expect(output).toContain("SIGTERM, and a close that never ends");
      expect(performance.now() - killedAt).toBeGreaterThanOrEqual(FORCED_EXIT_AFTER_MS);
    } finally {
      child.kill("SIGKILL");
      launcher.kill("SIGKILL");
    }
  }, 20_000);
});
