import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, cartBody, createAccount, type ApiAccount } from "@/lib/testing/api-client";
import { HOLD_WHILE_OTHERS_ARRIVE_MS, setDemoSettings } from "@/lib/testing/api-client-demo";
import {
  answerViolations,
  requestViolations,
  startPrismProxy,
  type PrismProxy,
} from "@/lib/testing/prism";

/**
 * Stoplight Prism, in front of the running app as a validating proxy, judges
 * the answers to a tour of the API by the document the app serves: every
 * operation, and every status the tour can bring about (a 409 by a held
 * first attempt, a 402 by a declining card, 401, 404, 405, 415, 422 and
 * the 400s). Prism reads the document as any client's tooling would, so a
 * document that only our own judge (lib/testing/openapi-check.ts) accepts
 * fails here. Malformed JSON is left out: Prism never answers it
 * (stoplightio/prism#2664); the corpus sends it to the app directly.
 */
let prism: PrismProxy;
let account: ApiAccount;

beforeAll(async () => {
  const document: unknown = await (await fetch(`${baseUrl()}/api/openapi.json`)).json();
  prism = await startPrismProxy(document, baseUrl());
  account = await createAccount();
}, 60_000);

afterAll(async () => {
  await prism?.stop();
});

interface Sent {
  method?: string;
  path: string;
  token?: string | null;
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function throughPrism(request: Sent): Promise<{ status: number; response: Response }> {
  const headers: Record<string, string> = { ...request.headers };
  const token = request.token === undefined ? account.token : request.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (request.key) headers["Idempotency-Key"] = request.key;
  if (request.body !== undefined) headers["Content-Type"] ??= "application/json";
  const response = await fetch(`${prism.url}${request.path}`, {
    method: request.method ?? "GET",
    headers,
    body:
      request.body === undefined
        ? undefined
        : typeof request.body === "string"
          ? request.body
          : JSON.stringify(request.body),
  });
  await response.arrayBuffer();
  const sent = `${request.method ?? "GET"} ${request.path}`;
  expect(answerViolations(response), sent).toEqual([]);
  // Prism's verdict on the request agrees with the server's: the document's
  // request schemas refuse exactly what the server refuses as malformed.
  const refusedAsMalformed = [400, 401, 413, 415].includes(response.status);
  expect(requestViolations(response).length > 0, `${sent} answered ${response.status}`).toBe(
    refusedAsMalformed,
  );
  return { status: response.status, response };
}

const checkout = (key: string, body: unknown = cartBody()): Sent => ({
  method: "POST",
  path: "/api/orders",
  key,
  body,
});

describe("Prism, as a validating proxy, finds every answer as the OpenAPI document describes it", () => {
  it("is a judge that can fail: given a document that promises a header the app does not send, it says so", async () => {
    type Document = {
      paths: Record<string, Record<string, { responses: Record<string, { headers: object }> }>>;
    };
    const document = (await (await fetch(`${baseUrl()}/api/openapi.json`)).json()) as Document;
    const health = document.paths["/api/health"]!.get!.responses["200"]!;
    health.headers = {
      ...health.headers,
      "X-Never-Sent": { required: true, schema: { type: "string" } },
    };
    const strict = await startPrismProxy(document, baseUrl());
    try {
      const response = await fetch(`${strict.url}/api/health`);
      expect(answerViolations(response).map((violation) => violation.message)).toEqual([
        "Response header must have required property 'x-never-sent'",
      ]);
    } finally {
      await strict.stop();
    }
  });

  it("the checkout: paid, replayed, refused for a reused key, declined, and each way a request is wrong", async () => {
    const key = randomUUID();
    const body = cartBody();
    const first = await throughPrism(checkout(key, body));
    expect(first.status).toBe(201);
    const replay = await throughPrism(checkout(key, body));
    expect(replay.status).toBe(201);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect((await throughPrism(checkout(key, cartBody()))).status).toBe(422);

    const declined = cartBody({ paymentMethod: "pm_card_chargeDeclined" });
    expect((await throughPrism(checkout(randomUUID(), declined))).status).toBe(402);

    expect((await throughPrism({ ...checkout(""), key: undefined })).status).toBe(400);
    expect((await throughPrism(checkout("has space"))).status).toBe(400);
    expect((await throughPrism(checkout(randomUUID(), { items: [] }))).status).toBe(400);
    expect((await throughPrism({ ...checkout(randomUUID()), token: null })).status).toBe(401);
    expect(
      (
        await throughPrism({
          ...checkout(randomUUID(), "cartId=1"),
          headers: { "Content-Type": "text/plain" },
        })
      ).status,
    ).toBe(415);
  });

  it("a retry while the first attempt holds the key: 409 with Retry-After", async () => {
    const slow = await createAccount();
    // The first attempt holds its claim this long: the retry is sent once the
    // claim is seen, not after a guess at how soon a busy machine makes it.
    expect(
      (
        await setDemoSettings(slow.token, {
          networkDelayMs: HOLD_WHILE_OTHERS_ARRIVE_MS,
          loseResponse: false,
        })
      ).status,
    ).toBe(200);
    const key = randomUUID();
    const body = cartBody();
    const first = throughPrism({ ...checkout(key, body), token: slow.token });
    await waitForClaim(slow.token, key);
    const retry = await throughPrism({ ...checkout(key, body), token: slow.token });
    expect(retry.status).toBe(409);
    expect(Number(retry.response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await first).status).toBe(201);
  });

  it("reads: orders, an order, a key, products, and what is not there", async () => {
    const key = randomUUID();
    const { response } = await throughPrism(checkout(key));
    const order = (await await fetch(`${baseUrl()}${response.headers.get("location")}`, {
      headers: { Authorization: `Bearer ${account.token}` },
    }).then((r) => r.json())) as { id: string };
    expect((await throughPrism({ path: "/api/orders?limit=2" })).status).toBe(200);
    expect((await throughPrism({ path: "/api/orders?limit=0" })).status).toBe(400);
    expect((await throughPrism({ path: `/api/orders/${order.id}` })).status).toBe(200);
    expect((await throughPrism({ path: `/api/orders/${randomUUID()}` })).status).toBe(404);
    expect((await throughPrism({ path: `/api/keys/${key}` })).status).toBe(200);
    expect((await throughPrism({ path: `/api/keys/${randomUUID()}` })).status).toBe(404);
    expect((await throughPrism({ path: "/api/products", token: null })).status).toBe(200);
  });

  it("accounts, demo settings, the lab, the operators' probes and the document itself", async () => {
    expect(
      (await throughPrism({ method: "POST", path: "/api/accounts", token: null })).status,
    ).toBe(201);
    expect((await throughPrism({ path: "/api/demo/settings" })).status).toBe(200);
    expect(
      (
        await throughPrism({
          method: "PUT",
          path: "/api/demo/settings",
          body: { networkDelayMs: 0, loseResponse: false },
        })
      ).status,
    ).toBe(200);
    const storm = await throughPrism({
      method: "POST",
      path: "/api/lab/storms",
      body: { strategy: "atomic_claim", size: 10 },
    });
    expect(storm.status).toBe(201);
    expect((await throughPrism({ path: storm.response.headers.get("location")! })).status).toBe(
      200,
    );
    expect((await throughPrism({ path: "/api/lab/storms" })).status).toBe(200);
    expect((await throughPrism({ path: `/api/lab/storms/${randomUUID()}` })).status).toBe(404);
    expect(
      (await throughPrism({ method: "POST", path: "/api/lab/unsafe-orders", body: cartBody() }))
        .status,
    ).toBe(201);
    for (const path of ["/api/health", "/api/ready", "/api/metrics", "/api/openapi.json"])
      expect((await throughPrism({ path, token: null })).status, path).toBe(200);
  });

  it("methods a path does not serve: 405 with Allow, and OPTIONS", async () => {
    expect((await throughPrism({ method: "DELETE", path: "/api/orders" })).status).toBe(405);
    expect((await throughPrism({ method: "PUT", path: "/api/products", token: null })).status).toBe(
      405,
    );
    const options = await throughPrism({ method: "OPTIONS", path: "/api/orders", token: null });
    expect(options.status).toBe(204);
    expect(options.response.headers.get("allow")).toBe("GET, POST, HEAD, OPTIONS");
  });
});

/** Waits until the key has been claimed (its inspection answers 200), asking the app directly. */
async function waitForClaim(token: string, key: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${baseUrl()}/api/keys/${key}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (response.status === 200) return;
    expect(response.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
