import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import { startStandInApp, type StandInApp } from "./stand-in-app";

let app: StandInApp;

beforeAll(async () => {
  app = await startStandInApp();
  judgeAnswersOf(app.baseUrl);
});

afterAll(async () => {
  await app.close();
});

describe("a describe", () => {
  it("receives nothing itself", () => {});

  afterAll(async () => {
    expect((await fetch(`${app.baseUrl}/api/teapot?in=afterAll`)).status).toBe(418);
  });
});
