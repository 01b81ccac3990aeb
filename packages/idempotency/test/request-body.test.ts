import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, readJsonBody } from "../src/request-body.js";

function post(body: BodyInit, contentType: string | null = "application/json") {
  const headers = new Headers();
  if (contentType) headers.set("content-type", contentType);
  return new Request("http://test/api/orders", { method: "POST", body, headers });
}

// A body whose length is not declared up front, as with chunked uploads.
function streamed(text: string) {
  const bytes = new TextEncoder().encode(text);
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 1024) controller.enqueue(bytes.slice(i, i + 1024));
      controller.close();
    },
  });
  return new Request("http://test/api/orders", {
    method: "POST",
    body: stream,
    headers: { "content-type": "application/json" },
    duplex: "half",
  } as RequestInit);
}

describe("readJsonBody", () => {
  it("parses JSON, with or without a charset", async () => {
    expect(await readJsonBody(post('{"a":1}'))).toEqual({ ok: true, json: { a: 1 } });
    expect(await readJsonBody(post('{"a":1}', "application/json; charset=utf-8"))).toEqual({
      ok: true,
      json: { a: 1 },
    });
  });

  it("rejects a body that is not declared as JSON", async () => {
    expect(await readJsonBody(post("a=1", "application/x-www-form-urlencoded"))).toMatchObject({
      ok: false,
      reason: "unsupported-media-type",
    });
    expect(await readJsonBody(post('{"a":1}', null))).toMatchObject({
      ok: false,
      reason: "unsupported-media-type",
    });
  });

  it("rejects a body with a content coding (it decodes none), and accepts identity", async () => {
    const coded = (coding: string) =>
      new Request("http://test/api/orders", {
        method: "POST",
        body: '{"a":1}',
        headers: { "content-type": "application/json", "content-encoding": coding },
      });
    expect(await readJsonBody(coded("gzip"))).toMatchObject({
      ok: false,
      reason: "unsupported-media-type",
      detail: expect.stringContaining("Content-Encoding"),
    });
    expect(await readJsonBody(coded("br"))).toMatchObject({
      ok: false,
      reason: "unsupported-media-type",
    });
    expect(await readJsonBody(coded("identity"))).toEqual({ ok: true, json: { a: 1 } });
    expect(await readJsonBody(coded(" Identity "))).toEqual({ ok: true, json: { a: 1 } });
  });

  it("rejects malformed JSON with the parser's reason", async () => {
    expect(await readJsonBody(post('{"a":'))).toMatchObject({
      ok: false,
      reason: "malformed-json",
      detail: expect.stringContaining("JSON"),
    });
  });

  it(`accepts exactly ${MAX_BODY_BYTES} bytes and rejects one more`, async () => {
    const json = (length: number) => `"${"x".repeat(length - 2)}"`;
    expect(await readJsonBody(post(json(MAX_BODY_BYTES)))).toMatchObject({ ok: true });
    expect(await readJsonBody(post(json(MAX_BODY_BYTES + 1)))).toMatchObject({
      ok: false,
      reason: "body-too-large",
    });
  });

  it("stops reading an undeclared body as soon as it passes the limit", async () => {
    expect(await readJsonBody(streamed(`"${"x".repeat(MAX_BODY_BYTES * 4)}"`))).toMatchObject({
      ok: false,
      reason: "body-too-large",
    });
  });
});

describe("readJsonBody's rules for what JSON may contain", () => {
  it.each([
    ["a NUL in an unknown field", '{"cartId":"c","x":"\\u0000"}', "U+0000"],
    ["a lone surrogate", '{"cartId":"\\ud800"}', "surrogate"],
    ["a number that overflows", '{"cartId":"c","x":1e400}', "finite"],
    [
      "nesting a few thousand levels deep",
      `{"x":${"[".repeat(3000)}${"]".repeat(3000)}}`,
      "levels deep",
    ],
  ])("refuses %s as unacceptable-json, saying which rule", async (_name, body, rule) => {
    expect(await readJsonBody(post(body))).toEqual({
      ok: false,
      reason: "unacceptable-json",
      detail: expect.stringContaining(rule),
    });
  });
});

describe("readJsonBody when the client goes away", () => {
  it("answers body-incomplete, not an error, when the upload breaks off", async () => {
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"cartId":'));
        controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
      },
    });
    const request = new Request("http://test/api/orders", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(await readJsonBody(request)).toMatchObject({ ok: false, reason: "body-incomplete" });
  });
});
