import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { keptSecret } from "@/lib/auth/kept-secret";

/** The session secret the launcher makes once and keeps, so restarts and instances agree. */
const dirs: string[] = [];
async function secretFile(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "oncepay-secret-"));
  dirs.push(dir);
  return path.join(dir, "nested", "session-secret");
}
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("the kept session secret", () => {
  it("is made once, readable by its owner alone, and the same on every later start", async () => {
    const file = await secretFile();
    const first = await keptSecret(file);

    expect(first.length).toBeGreaterThanOrEqual(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await keptSecret(file)).toBe(first);
    expect((await readFile(file, "utf8")).trim()).toBe(first);
  });

  it("is one secret when ten launchers start at once", async () => {
    const file = await secretFile();
    const secrets = await Promise.all(Array.from({ length: 10 }, () => keptSecret(file)));

    expect(new Set(secrets).size).toBe(1);
  });

  it("refuses a file that holds no usable secret, rather than signing with it", async () => {
    const file = await secretFile();
    await keptSecret(file);
    await writeFile(file, "short");

    await expect(keptSecret(file)).rejects.toThrow(/no usable session secret/);
  });
});
