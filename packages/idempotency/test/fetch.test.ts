import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createEngine, defineOperation, KeyWaiters, type Engine } from "../src/index.js";
import { idempotentRoute } from "../src/fetch.js";
import { pgStore, type PgTransaction } from "../src/pg.js";
import { openTestDatabase, type TestDatabase } from "./support/database.js";

/** The README's example, with a courier that counts what it sends, keyed as a real one would be. */
const sent = new Map<string, string>();
const courier = {
  async send(to: string, key: string): Promise<string> {
    if (!sent.has(key)) sent.set(key, `gift-${sent.size + 1}-to-${to}`);
    return sent.get(key)!;
  },
};

const sendGift = defineOperation<{ to: string }, PgTransaction>({
  name: "send-gift",
  parse: (json) =>
    typeof (json as { to?: unknown })?.to === "string"
      ? { ok: true, input: { to: (json as { to: string }).to } }
      : { ok: false, detail: "`to` is required.", errors: [{ path: "to", message: "a string" }] },
  progressAtClaim: () => ({}),
  phases: [
    {
      kind: "side-effect",
      point: "sending",
      run: async ({ input, sideEffectKey }) => ({
        to: "recording",
        progress: { receipt: await courier.send(input.to, sideEffectKey) },
      }),
    },
    {
      kind: "atomic",
      point: "recording",
      run: async ({ request, progress }, tx) => {
        await tx.query(`INSERT INTO effects (scope, label, key_id) VALUES ($1, 'gift', $2)`, [
          request.scope,
          request.keyId,
        ]);
        return {
          response: {
            status: 201,
            headers: { "Content-Type": "application/json" },
            body: { receipt: progress.receipt },
          },
        };
      },
    },
  ],
});

let database: TestDatabase;
let engine: Engine<PgTransaction>;
let POST: (request: Request) => Promise<Response>;

beforeAll(async () => {
  database = await openTestDatabase();
  engine = createEngine({
    store: pgStore(database.pool, {
      leaseSeconds: 30,
      ttlSeconds: 86_400,
      statements: database.statements,
    }),
    operations: [sendGift],
  });
  POST = idempotentRoute({
    engine,
    operation: sendGift,
    scope: (request) =>
      request.headers.get("authorization") ?? new Response("who are you?", { status: 401 }),
  });
});
afterAll(() => database?.close());

let user = 0;
function gift(key: string | null, body: string, headers: Record<string, string> = {}): Request {
  return new Request("http://shop.test/gifts", {
    method: "POST",
    headers: {
      authorization: `user-${user}`,
      "content-type": "application/json",
      ...(key === null ? {} : { "idempotency-key": key }),
      ...headers,
    },
    body,
  });
}

describe("idempotentRoute (the README's route)", () => {
  it("answers 201 once, then replays the same bytes with Idempotent-Replayed", async () => {
    user++;
    const first = await POST(gift("k1", '{"to":"ada"}'));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.text();
    const again = await POST(gift("k1", '{ "to": "ada" }'));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstBody);
    const [row] = await database.rows<{ count: number }>(
      `SELECT count(*)::int AS count FROM effects WHERE scope = $1`,
      [`user-${user}`],
    );
    expect(row!.count).toBe(1);
  });

  it("tells the key's lifetime on the first answer, on its replay, and on a 422, the same each time", async () => {
    user++;
    const before = Date.now();
    const first = await POST(gift("k1", '{"to":"ada"}'));
    const replay = await POST(gift("k1", '{"to":"ada"}'));
    const reused = await POST(gift("k1", '{"to":"bob"}'));
    expect([first.status, replay.status, reused.status]).toEqual([201, 201, 422]);
    const [row] = await database.rows<{ expires_at: Date }>(
      `SELECT expires_at FROM idempotency_keys WHERE scope = $1`,
      [`user-${user}`],
    );
    for (const response of [first, replay, reused]) {
      expect(response.headers.get("idempotency-key-policy")).toBe("retention=86400, lease=30");
      // The row's expiry, to the second an HTTP date can say.
      const expires = Date.parse(response.headers.get("idempotency-key-expires")!);
      expect(expires).toBe(Math.floor(row!.expires_at.getTime() / 1000) * 1000);
    }
    const expires = Date.parse(first.headers.get("idempotency-key-expires")!);
    expect(expires).toBeGreaterThan(before + 86_400_000 - 60_000);
  });

  it("tells no lifetime where no key was kept", async () => {
    user++;
    const response = await POST(gift("k1", "{"));
    expect(response.status).toBe(400);
    expect(response.headers.get("idempotency-key-expires")).toBeNull();
    expect(response.headers.get("idempotency-key-policy")).toBeNull();
  });

  it("links each problem to the page that explains it, when the route names one", async () => {
    const documented = idempotentRoute({
      engine,
      operation: sendGift,
      scope: () => `user-${++user}`,
      problems: {
        problemType: (slug) => `https://shop.test/problems/${slug}`,
        describedBy: (slug) => `https://shop.test/problems/${slug}`,
      },
    });
    const missing = await documented(gift(null, '{"to":"ada"}'));
    expect(missing.status).toBe(400);
    expect(missing.headers.get("link")).toBe(
      '<https://shop.test/problems/idempotency-key-missing>; rel="describedby"',
    );
    expect(await missing.json()).toMatchObject({
      type: "https://shop.test/problems/idempotency-key-missing",
    });
    const scope = `user-${++user}`;
    const sameUser = idempotentRoute({
      engine,
      operation: sendGift,
      scope: () => scope,
      problems: { describedBy: (slug) => `/problems/${slug}` },
    });
    await sameUser(gift(`k-${user}`, '{"to":"ada"}'));
    const reused = await sameUser(gift(`k-${user}`, '{"to":"bob"}'));
    expect(reused.status).toBe(422);
    expect(reused.headers.get("link")).toBe(
      '</problems/idempotency-key-reused>; rel="describedby"',
    );
    // Without a page to link, no Link.
    expect((await POST(gift(null, "{}"))).headers.get("link")).toBeNull();
  });

  it("lets a duplicate sent with Prefer: wait=N wait for the first and get its answer, with Preference-Applied", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slowCourier = defineOperation<{ to: string }, PgTransaction>({
      ...sendGift,
      name: "send-gift-slowly",
      phases: [
        {
          kind: "side-effect",
          point: "sending",
          run: async ({ input, sideEffectKey }) => {
            await held;
            return {
              to: "recording",
              progress: { receipt: await courier.send(input.to, sideEffectKey) },
            };
          },
        },
        sendGift.phases[1]!,
      ],
    });
    const waiters = new KeyWaiters();
    const waitingEngine = createEngine({
      store: engine.store,
      operations: [slowCourier],
      waiting: { waiters, maxWaitMs: 5_000 },
    });
    const route = idempotentRoute({
      engine: waitingEngine,
      operation: slowCourier,
      scope: () => "patient",
    });
    const key = `k-wait-${++user}`;
    const first = route(gift(key, '{"to":"ada"}'));
    await expect
      .poll(() =>
        database
          .rows(`SELECT 1 FROM idempotency_keys WHERE idem_key = $1`, [key])
          .then((rows) => rows.length),
      )
      .toBe(1);
    const impatient = await route(gift(key, '{"to":"ada"}'));
    expect(impatient.status).toBe(409);
    expect(impatient.headers.get("preference-applied")).toBeNull();
    const patient = route(gift(key, '{"to":"ada"}', { prefer: "wait=5" }));
    await expect.poll(() => waiters.subscribed).toBe(1);
    release();
    const [answer, waited] = await Promise.all([first, patient]);
    expect(answer.status).toBe(201);
    expect(waited.status).toBe(201);
    expect(waited.headers.get("idempotent-replayed")).toBe("true");
    expect(waited.headers.get("preference-applied")).toBe("wait=5");
    expect(await waited.text()).toBe(await answer.text());
  });

  it("passes the scope's own refusal through, before the key is read", async () => {
    const response = await POST(
      new Request("http://shop.test/gifts", { method: "POST", body: "{}" }),
    );
    expect(response.status).toBe(401);
  });

  it.each([
    ["no key", null, '{"to":"ada"}', {}, 400, "urn:oncepay:problem:idempotency-key-missing"],
    [
      "a key with a space",
      "a b",
      '{"to":"ada"}',
      {},
      400,
      "urn:oncepay:problem:idempotency-key-invalid",
    ],
    ["a body that is not JSON", "k2", "{", {}, 400, "urn:oncepay:problem:malformed-json"],
    [
      "a body of another type",
      "k2",
      '{"to":"ada"}',
      { "content-type": "text/plain" },
      415,
      "urn:oncepay:problem:unsupported-media-type",
    ],
    ["a body the operation refuses", "k2", '{"to":1}', {}, 400, "urn:oncepay:problem:invalid-body"],
  ])(
    "refuses %s with a problem+json, writing nothing",
    async (_, key, body, headers, status, type) => {
      user++;
      const response = await POST(gift(key, body, headers));
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({ type, status });
      expect(
        await database.rows(`SELECT 1 FROM idempotency_keys WHERE scope = $1`, [`user-${user}`]),
      ).toEqual([]);
    },
  );

  it("answers 422 for the key reused with another body", async () => {
    user++;
    await POST(gift("k1", '{"to":"ada"}'));
    const response = await POST(gift("k1", '{"to":"bob"}'));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      type: "urn:oncepay:problem:idempotency-key-reused",
    });
  });

  it("answers 503 with Retry-After when the database cannot be reached", async () => {
    const unreachable = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:9/none" });
    const offline = createEngine({
      store: pgStore(unreachable, { leaseSeconds: 30, ttlSeconds: 60 }),
      operations: [sendGift],
    });
    const route = idempotentRoute({ engine: offline, operation: sendGift, scope: () => "anyone" });
    const response = await route(gift("k1", '{"to":"ada"}'));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("2");
    await unreachable.end();
  });
});
