import { afterAll, afterEach, beforeEach, inject } from "vitest";
import type { JsonObject } from "@/lib/openapi/document";
import { observeAnswers } from "@/lib/testing/answer-observers";
import { isJudged, judgeAnswersOf, onJudgedApp } from "@/lib/testing/judged-apps";
import { isApiPath, OpenApiJudge, type Answer } from "@/lib/testing/openapi-check";
import { problemPageViolations } from "@/lib/testing/problem-pages-check";

/**
 * Every answer a test file receives from an app it talks to, by fetch or by
 * the raw helpers, is judged by the OpenAPI document that app serves: the
 * shared test app, and each app the file starts (judged-apps.ts names
 * them). An answer the document does not describe fails the test that
 * received it, naming it; one received outside any test (a beforeAll or an
 * afterAll, the file's or a describe's) fails the file. So the document
 * cannot drift from what the server does: each test that talks to an app
 * also tests the document, and the page each problem's `type` names.
 */

const untouchedFetch = globalThis.fetch;
/** Each app's document, read once per origin; apps that serve the same text share one judge. */
const judgesByOrigin = new Map<string, Promise<OpenApiJudge>>();
const judgesByText = new Map<string, OpenApiJudge>();
let inTest = false;
let duringTest: Promise<string[]>[] = [];
let outsideTests: Promise<string[]>[] = [];

function servedDocument(origin: string): Promise<OpenApiJudge> {
  let judge = judgesByOrigin.get(origin);
  if (!judge) {
    judge = untouchedFetch(`${origin}/api/openapi.json`)
      .then((response) => {
        if (!response.ok) throw new Error(`GET /api/openapi.json answered ${response.status}`);
        return response.text();
      })
      .then((text) => {
        let byText = judgesByText.get(text);
        if (!byText) {
          byText = new OpenApiJudge(JSON.parse(text) as JsonObject);
          judgesByText.set(text, byText);
        }
        return byText;
      });
    // A failure is reported with the first answer it leaves unjudged.
    judge.catch(() => {});
    judgesByOrigin.set(origin, judge);
  }
  return judge;
}

// Read while the app surely serves: a test may stop or kill it right after its last answer.
onJudgedApp((origin) => void servedDocument(origin));
// The shared app is started by the global setup, in another process (for
// the shared lane only: the other lanes' files start their own).
const sharedApp = inject("baseUrl") as string | undefined;
if (sharedApp) judgeAnswersOf(sharedApp);

function judgeAnswer(url: string, answer: Answer | Promise<Answer | undefined>): void {
  if (!isJudged(url)) return;
  const origin = new URL(url).origin;
  const path = answer instanceof Promise ? new URL(url).pathname : answer.path;
  if (!isApiPath(path)) return;
  const where = inTest ? "" : " (outside any test: in a beforeAll or an afterAll)";
  (inTest ? duringTest : outsideTests).push(
    Promise.all([servedDocument(origin), answer]).then(
      ([openApi, received]) =>
        received === undefined
          ? []
          : [...openApi.answerViolations(received), ...problemPageViolations(received)].map(
              (violation) => `${origin} ${received.method} ${received.path}${where}: ${violation}`,
            ),
      (error: Error) => [
        `${origin} ${path}: not judged, its OpenAPI document unread: ${error.message}`,
      ],
    ),
  );
}

observeAnswers(judgeAnswer);

globalThis.fetch = async (input, init) => {
  const response = await untouchedFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
  judgeAnswer(
    url.href,
    // A body that breaks off (the lost-response demo) is no answer to judge.
    response
      .clone()
      .text()
      .then(
        (body) => ({
          method,
          path: url.pathname + url.search,
          status: response.status,
          headers: Object.fromEntries(response.headers),
          body,
        }),
        () => undefined,
      ),
  );
  return response;
};

async function throwIfAny(judgements: Promise<string[]>[]): Promise<void> {
  const violations = (await Promise.all(judgements)).flat();
  if (violations.length > 0)
    throw new Error(
      `${violations.length} answer(s) the OpenAPI document does not describe:\n${violations.join("\n")}`,
    );
}

// Registered before the file's own hooks: this beforeEach runs first and
// this afterEach last (Vitest runs after-hooks in reverse), so what a
// test's own beforeEach and afterEach receive is the test's.
beforeEach(() => {
  inTest = true;
});

afterEach(async () => {
  inTest = false;
  const judgements = duringTest;
  duringTest = [];
  await throwIfAny(judgements);
});

// Likewise the last afterAll: after the file's own, and every describe's.
afterAll(async () => {
  const judgements = outsideTests;
  outsideTests = [];
  await throwIfAny(judgements);
});
