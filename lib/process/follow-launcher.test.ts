import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  FORCED_EXIT_AFTER_MS,
  LAUNCHER_PID_ENV,
  whenProcessEnds,
  type ProcessLook,
} from "@/lib/process/follow-launcher";
import { typescriptScriptArgs } from "@/lib/process/typescript-script";

/**
 * The watch a launcher's children keep on it. That they all end however the
 * launcher ends is proved on the real app in launcher-shutdown.test.ts.
 */

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

  it("calls back for a process that has ended but was never reaped (a zombie still answers kill(pid, 0))", async () => {
    // sh starts a short sleep, then becomes a long one that never waits for
    // it: the short sleep ends as a zombie whose pid stays taken.
    const parent = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const zombie = Number(
        await new Promise<string>((resolve) =>
          parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      let calls = 0;
      const stop = whenProcessEnds(zombie, () => calls++, 20);
      await expect.poll(() => calls, { timeout: 3000, interval: 20 }).toBe(1);
      stop();
      // Still there, as a zombie: the pid alone would say it runs.
      expect(() => process.kill(zombie, 0)).not.toThrow();
    } finally {
      parent.kill("SIGKILL");
    }
  });
});

describe("a child whose SIGTERM never finishes", () => {
  it("exits anyway, FORCED_EXIT_AFTER_MS after the launcher is gone", async () => {
    const launcher = spawn("sleep", ["60"], { stdio: "ignore" });
    const child = spawn(process.execPath, typescriptScriptArgs("lib/testing/ignores-sigterm.mts"), {
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

describe("a look at the launcher that fails", () => {
  const looks = (...seen: ProcessLook[]) => {
    let next = 0;
    return () => seen[Math.min(next++, seen.length - 1)]!;
  };
  const running = (identity: string): ProcessLook => ({ seen: "running", identity });
  const nothing: ProcessLook = { seen: "nothing", because: "EMFILE" };

  it("says nothing: the watch asks again, and only a look that sees it gone ends it", async () => {
    let calls = 0;
    const look = looks(running("started 1"), nothing, nothing, running("started 1"), nothing, {
      seen: "ended",
    });
    const stop = whenProcessEnds(1, () => calls++, 5, look);
    try {
      await expect.poll(() => calls, { interval: 5 }).toBe(1);
    } finally {
      stop();
    }
  });

  it("learns the identity from the first look that sees it, and ends at another under its pid", async () => {
    let calls = 0;
    const stop = whenProcessEnds(
      1,
      () => calls++,
      5,
      looks(nothing, running("started 1"), running("started 1"), running("started 2")),
    );
    try {
      await expect.poll(() => calls, { interval: 5 }).toBe(1);
    } finally {
      stop();
    }
  });

  it("keeps a child that has used up its file descriptors following its live launcher", async () => {
    const launcher = spawn("sleep", ["60"], { stdio: "ignore" });
    // A limit low enough to reach at once, high enough for Node to start.
    const child = spawn(
      "bash",
      [
        "-c",
        'ulimit -n 256 && exec "$0" "$@"',
        process.execPath,
        ...typescriptScriptArgs("lib/testing/follows-without-descriptors.mts"),
      ],
      {
        env: { ...process.env, [LAUNCHER_PID_ENV]: String(launcher.pid) },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    try {
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(output).toContain("out of descriptors (EMFILE)");
      expect(output).not.toContain("is gone; stopping");
      expect({ code, output }).toMatchObject({ code: 0 });
    } finally {
      child.kill("SIGKILL");
      launcher.kill("SIGKILL");
    }
  }, 20_000);
});
