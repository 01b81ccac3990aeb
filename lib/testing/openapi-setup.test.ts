import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The contract check (openapi-setup.ts) must fail a run: the fixtures in
 * openapi-setup-fixtures/ receive answers that depart from the document,
 * and are run here by a Vitest of their own, so their failures are read
 * from its report instead of failing this run.
 */
interface FileResult {
  name: string;
  status: string;
  message: string;
  assertionResults: { title: string; status: string; failureMessages: string[] }[];
}

let exitCode: number | null;
let files: Map<string, FileResult>;

beforeAll(async () => {
  const workDir = await mkdtemp(path.join(tmpdir(), "oncepay-judge-"));
  const report = path.join(workDir, "report.json");
  // This run's own Vitest settings must not leak into the nested one.
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("VITEST")) delete env[name];
  try {
    exitCode = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          path.resolve("node_modules/vitest/vitest.mjs"),
          "run",
          "--config",
          "lib/testing/openapi-setup-fixtures/vitest.config.mts",
          "--reporter=json",
          `--outputFile=${report}`,
        ],
        { env, stdio: "ignore" },
      );
      child.on("exit", (code) => resolve(code));
    });
    const { testResults } = JSON.parse(await readFile(report, "utf8")) as {
      testResults: FileResult[];
    };
    files = new Map(testResults.map((file) => [path.basename(file.name), file]));
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
});

function testsOf(file: string): Record<string, { status: string; failure: string }> {
  return Object.fromEntries(
    files
      .get(file)!
      .assertionResults.map((test) => [
        test.title,
        { status: test.status, failure: test.failureMessages.join("\n") },
      ]),
  );
}

describe("the contract check", () => {
  it("fails the run when an answer departs", () => {
    expect(exitCode).toBe(1);
  });

  it("judges the answers of a second app the file started and named, fetched or raw, and fails the test that received one that departs", () => {
    const tests = testsOf("second-app.fixture.ts");
    expect(tests["an answer the document describes"]!.status).toBe("passed");
    expect(tests["a fetched answer that departs"]).toEqual({
      status: "failed",
      failure: expect.stringMatching(
        /GET \/api\/teapot: the document has no path \/api\/teapot\b/,
      ) as string,
    });
    expect(tests["a raw helper's answer that departs"]).toEqual({
      status: "failed",
      failure: expect.stringContaining(
        "GET /api/health 200: body /status must be equal to constant",
      ) as string,
    });
    // Nobody named it: not an app of the file's (a test's recorder, say).
    expect(tests["an answer that departs from an app nobody named"]!.status).toBe("passed");
  });

  it("fails the file for an answer that departs in a beforeAll, naming it, and leaves the tests' results alone", () => {
    const file = files.get("before-all.fixture.ts")!;
    expect(testsOf("before-all.fixture.ts")["receives nothing itself"]!.status).toBe("passed");
    expect(file.status).toBe("failed");
    expect(file.message).toContain(
      "GET /api/teapot?in=beforeAll (outside any test: in a beforeAll or an afterAll): the document has no path",
    );
    // The describe's beforeAll received an answer the document describes.
    expect(file.message).toMatch(/^1 answer\(s\)/);
  });

  it("fails the file for an answer that departs in an afterAll, a describe's included", () => {
    const file = files.get("after-all.fixture.ts")!;
    expect(testsOf("after-all.fixture.ts")["receives nothing itself"]!.status).toBe("passed");
    expect(file.status).toBe("failed");
    expect(file.message).toContain(
      "GET /api/teapot?in=afterAll (outside any test: in a beforeAll or an afterAll): the document has no path",
    );
  });
});
