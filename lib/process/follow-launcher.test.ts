import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { whenProcessEnds } from "@/lib/process/follow-launcher";
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
