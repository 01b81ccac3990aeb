import { afterAll, beforeAll, expect, it } from "vitest";
import { reportAnswer } from "@/lib/testing/answer-observers";
import { judgeAnswersOf } from "@/lib/testing/judged-apps";
import { startStandInApp, type StandInApp } from "./stand-in-app";

// An app the file started and named (as startAppServer names each app),
// and one it did not name.
let named: StandInApp;
let unnamed: StandInApp;

beforeAll(async () => {
  [named, unnamed] = await Promise.all([startStandInApp(), startStandInApp()]);
  judgeAnswersOf(named.baseUrl);
});

afterAll(async () => {
  await Promise.all([named.close(), unnamed.close()]);
});

it("an answer the document describes", async () => {
  expect((await fetch(`${named.baseUrl}/api/health`)).status).toBe(200);
});

it("a fetched answer that departs", async () => {
  expect((await fetch(`${named.baseUrl}/api/teapot`)).status).toBe(418);
});

it("a raw helper's answer that departs", () => {
  reportAnswer(named.baseUrl, {
    method: "GET",
    path: "/api/health",
    status: 200,
    headers: { "content-type": "application/json", "x-request-id": "stand-in" },
    body: JSON.stringify({ status: "teapot" }),
  });
});

it("an answer that departs from an app nobody named", async () => {
  expect((await fetch(`${unnamed.baseUrl}/api/teapot`)).status).toBe(418);
});
