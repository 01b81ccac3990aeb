import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runLanes, type LaneOutput } from "./lanes";

/** A lane that runs a few lines of JavaScript in a Node.js of its own. */
const nodeLane = (name: string, script: string) => ({
  name,
  command: process.execPath,
  args: ["-e", script],
});

function recorder(): LaneOutput & { lines: { stream: string; line: string }[] } {
  const lines: { stream: string; line: string }[] = [];
  return {
    lines,
    stdout: (line) => lines.push({ stream: "stdout", line }),
    stderr: (line) => lines.push({ stream: "stderr", line }),
  };
}

let folder: string | undefined;
afterEach(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

describe("runLanes", () => {
  it("runs the lanes at the same time: each waits for a file the other writes", async () => {
    folder = await mkdtemp(path.join(tmpdir(), "oncepay-lanes-"));
    // Run one after the other, the first would wait for ever.
    const waitsFor = (mine: string, theirs: string) => `
      const fs = require("node:fs");
      fs.writeFileSync(${JSON.stringify(path.join(folder!, mine))}, "");
      const poll = setInterval(() => {
        if (fs.existsSync(${JSON.stringify(path.join(folder!, theirs))})) { clearInterval(poll); console.log("met"); }
      }, 10);`;
    const output = recorder();
    const results = await runLanes(
      [nodeLane("a", waitsFor("a", "b")), nodeLane("b", waitsFor("b", "a"))],
      output,
    );
    expect(results.map(({ name, code }) => ({ name, code }))).toEqual([
      { name: "a", code: 0 },
      { name: "b", code: 0 },
    ]);
    expect(output.lines.map(({ line }) => line).sort()).toEqual(["[a] met", "[b] met"]);
  });

  it("marks every line with its lane, keeps stdout and stderr apart, and reports each exit", async () => {
    const output = recorder();
    const results = await runLanes(
      [
        nodeLane("shared", `console.log("one"); console.log("two"); console.error("oops")`),
        nodeLane("alongside", `console.log("three"); process.exit(3)`),
      ],
      output,
    );
    expect(results.map(({ name, code, signal }) => ({ name, code, signal }))).toEqual([
      { name: "shared", code: 0, signal: null },
      { name: "alongside", code: 3, signal: null },
    ]);
    const linesOf = (stream: string) =>
      output.lines.filter((line) => line.stream === stream).map(({ line }) => line);
    // In order within a stream (the two streams may interleave either way).
    expect(linesOf("stdout").filter((line) => line.startsWith("[shared]"))).toEqual([
      "[shared]    one",
      "[shared]    two",
    ]);
    expect(linesOf("stderr")).toEqual(["[shared]    oops"]);
    expect(linesOf("stdout").filter((line) => line.startsWith("[alongside]"))).toEqual([
      "[alongside] three",
    ]);
  });
});
