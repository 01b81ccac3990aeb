import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { setupErrorFor, shellWord } from "@/lib/db/database-setup-error";

const server = { host: "127.0.0.1", port: 5432, user: "shop" };

describe("the one line a start-up prints when it cannot have its database", () => {
  it.each([
    "oncepay",
    'it\'s "quoted"',
    "two  spaces and a $HOME",
    "café ☕ `date` ; rm -rf /",
    "-U postgres",
  ])("a shell reads the quoted name %j back unchanged", async (name) => {
    const { stdout } = await promisify(execFile)("sh", ["-c", `printf %s ${shellWord(name)}`]);
    expect(stdout).toBe(name);
  });

  it("a connection refused on every address of a name (an AggregateError without a message) names the refusal", () => {
    const refused = Object.assign(
      new AggregateError(
        [Object.assign(new Error("connect ECONNREFUSED ::1:5432"), { code: "ECONNREFUSED" })],
        "",
      ),
      { code: "ECONNREFUSED" },
    );

    expect(setupErrorFor(refused, { ...server, host: "localhost" }, "open it").message).toBe(
      "cannot reach PostgreSQL at localhost:5432 (connect ECONNREFUSED ::1:5432); start it, or point DATABASE_URL at a server that runs",
    );
  });

  it("anything else keeps PostgreSQL's words and code, on one line", () => {
    const odd = Object.assign(new Error("out of\n  shared memory"), { code: "53200" });

    expect(setupErrorFor(odd, server, 'create database "x"', { hint: "ask" }).message).toBe(
      'could not create database "x" on 127.0.0.1:5432: out of shared memory (SQLSTATE 53200); ask',
    );
  });
});
