import { afterEach, inject } from "vitest";
import type { JsonObject } from "@/lib/openapi/document";
import { observeAnswers } from "@/lib/testing/answer-observers";
import { isApiPath, OpenApiJudge, type Answer } from "@/lib/testing/openapi-check";

/**
 * Every answer a test receives from the shared test app, by fetch or by the
 * raw helpers, is judged by the OpenAPI document that app serves; a test
 * that received an answer the document does not describe fails, naming it.
 * So the document cannot drift from what the server does: each contract,
 * corpus and lab test also tests the document.
 */

const appOrigin = new URL(inject("baseUrl")).origin;
const untouchedFetch = globalThis.fetch;
let judge: Promise<OpenApiJudge> | undefined;
let judgements: Promise<string[]>[] = [];

function servedDocument(): Promise<OpenApiJudge> {
  judge ??= untouchedFetch(`${appOrigin}/api/openapi.json`)
    .then((response) => response.json() as Promise<JsonObject>)
    .then((document) => new OpenApiJudge(document));
  return judge;
}

function judgeAnswer(url: string, answer: Answer | Promise<Answer | undefined>): void {
  if (new URL(url).origin !== appOrigin) return;
  const path = answer instanceof Promise ? new URL(url).pathname : answer.path;
  if (!isApiPath(path)) return;
  judgements.push(
    Promise.all([servedDocument(), answer]).then(([openApi, received]) =>
      received === undefined
        ? []
        : openApi
            .answerViolations(received)
            .map((violation) => `${received.method} ${received.path}: ${violation}`),
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

afterEach(async () => {
  const violations = (await Promise.all(judgements)).flat();
  judgements = [];
  if (violations.length > 0)
    throw new Error(
      `${violations.length} answer(s) the OpenAPI document does not describe:\n${violations.join("\n")}`,
    );
});
