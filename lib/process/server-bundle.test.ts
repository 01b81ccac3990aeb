import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { bundleServer } from "@/lib/process/server-bundle";

describe("the server bundle", () => {
  it("is always whole to a reader, while several launchers make it at once", async () => {
    const outfile = await bundleServer();
    const whole = (await readFile(outfile)).length;
    expect(whole).toBeGreaterThan(1000);

    // What `node serve.mjs` would have read, again and again, while eight
    // launchers bundle: in-place writes let a read see it truncated (an
    // empty module, which Node runs and exits 0).
    let bundling = true;
    const sizesRead: number[] = [];
    const reader = (async () => {
      while (bundling) sizesRead.push((await readFile(outfile)).length);
    })();
    await Promise.all(Array.from({ length: 8 }, () => bundleServer()));
    bundling = false;
    await reader;

    expect(sizesRead.length).toBeGreaterThan(0);
    expect(sizesRead.filter((size) => size !== whole)).toEqual([]);
  });
});
