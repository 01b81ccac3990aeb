import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

// One supported Node.js, said in four places that must agree: package.json's
// engines (npm's engine-strict refuses any other), .node-version (the release
// CI installs), the README a newcomer reads, and the Node these tests run on.
const root = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFile(path.join(root, file), "utf8");

function parse(version: string): [number, number] {
  const [major = NaN, minor = NaN] = version.replace(/^v/, "").split(".").map(Number);
  return [major, minor];
}

async function engineMinimum(): Promise<[number, number]> {
  const engines = JSON.parse(await read("package.json")).engines.node as string;
  const minimum = /^>=(\d+\.\d+)$/.exec(engines)?.[1];
  if (!minimum) throw new Error(`package.json's engines.node is "${engines}", not ">=MAJOR.MINOR"`);
  return parse(minimum);
}

const atLeast = ([major, minor]: [number, number], [minMajor, minMinor]: [number, number]) =>
  major === minMajor && minor >= minMinor;

describe("the supported Node.js version", () => {
  it("is the one CI installs, within package.json's engines", async () => {
    const pinned = parse((await read(".node-version")).trim());
    expect(atLeast(pinned, await engineMinimum())).toBe(true);
  });

  it("is the one the README names", async () => {
    const [major, minor] = await engineMinimum();
    expect(await read("README.md")).toContain(`Node.js ${major}.${minor} or newer`);
  });

  it("is the one these tests run on", async () => {
    expect(atLeast(parse(process.versions.node), await engineMinimum())).toBe(true);
  });

  it("is refused in any other version by npm itself", async () => {
    expect(await read(".npmrc")).toMatch(/^engine-strict=true$/m);
  });
});
