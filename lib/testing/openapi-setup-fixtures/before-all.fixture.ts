import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import { startStandInApp, type StandInApp } from "./stand-in-app";

let app: StandInApp;

beforeAll(async () => {
  app = await startStandInApp();
  judgeAnswersOf(app.baseUrl);
  expect((await fetch(`${app.baseUrl}/api/teapot?in=beforeAll`)).status).toBe(418);
});

afterAll(async () => {
  await app.close();
});

describe("a describe", () => {
  beforeAll(async () => {
    expect((await fetch(`${app.baseUrl}/api/health`)).status).toBe(200);
  });

  it("receives nothing itself", () => {});
});
