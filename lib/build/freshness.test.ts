import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildFreshness } from "@/lib/build/freshness";

let root: string;

async function write(relative: string, at: Date): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, relative);
  await utimes(file, at, at);
}

const before = new Date("2026-01-01T10:00:00Z");
const buildTime = new Date("2026-01-01T11:00:00Z");
const after = new Date("2026-01-01T12:00:00Z");

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "oncepay-freshness-"));
  await write("app/page.tsx", before);
  await write("lib/orders/cart.ts", before);
  await write("package.json", before);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("buildFreshness", () => {
  it("is stale when there is no production build", async () => {
    expect(await buildFreshness(root)).toEqual({ stale: true, reason: "no production build yet" });
  });

  it("is fresh when every source is older than the build", async () => {
    await write(".next/BUILD_ID", buildTime);
    expect(await buildFreshness(root)).toEqual({ stale: false });
  });

  it("is stale when a source deep in lib/ changed after the build, and names it", async () => {
    await write(".next/BUILD_ID", buildTime);
    await write("lib/orders/cart.ts", after);
    expect(await buildFreshness(root)).toEqual({
      stale: true,
      reason: `${path.join("lib", "orders", "cart.ts")} changed since the last build`,
    });
  });

  it("is stale when a top-level input such as package.json changed", async () => {
    await write(".next/BUILD_ID", buildTime);
    await write("package.json", after);
    expect(await buildFreshness(root)).toMatchObject({ stale: true });
  });

  it("ignores tests and files outside the build's inputs", async () => {
    await write(".next/BUILD_ID", buildTime);
    await write("lib/orders/cart.test.ts", after);
    await write("lib/testing/soak/run.ts", after);
    await write("lib/payments/simulator/README.md", after);
    await write("e2e/checkout.spec.ts", after);
    await write("README.md", after);
    expect(await buildFreshness(root)).toEqual({ stale: false });
  });
});
