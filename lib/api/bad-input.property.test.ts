import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG } from "@/lib/orders/catalog";
import { baseUrl, createAccount, type ApiAccount } from "@/lib/testing/api-client";
import {
  chargedAmount,
  expectNoServerError,
  expectProblem,
  footprintOf,
  plusOnePaid,
  serverPrice,
  type Footprint,
} from "@/lib/testing/bad-input";
import { validCart, VALID_ITEMS } from "@/lib/testing/bad-input-corpus";
import { closeTestDb, idempotencyKeysOf } from "@/lib/testing/database";
import { sendWire, type WireRequest, type WireResponse } from "@/lib/testing/raw-http";

/**
 * The bad-input invariants over generated input instead of a list: whatever
 * JSON body or Idempotency-Key value a client sends, POST /api/orders never
 * answers 5xx, every error is problem+json with its own status, nothing is
 * stored or charged unless the answer is 201, and a 201 charged the
 * server's price. Reproduce a failure with FC_SEED=<seed> (fast-check prints
 * it, and the path to the smallest failing input).
 */
const SEED = process.env.FC_SEED === undefined ? 20261202 : Number(process.env.FC_SEED);
// Enough to reach every branch of the body reader and the key parser each
// run, few enough that both properties finish in well under a minute.
const NUM_RUNS = 120;
const PROPERTY_TIMEOUT_MS = 90_000;

afterAll(closeTestDb);

// Strings JSON can carry but the server must refuse (U+0000, lone surrogates) or must not choke on.
const hostileUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constant("\u0000") },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
  },
);
const hostileString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: hostileUnit, maxLength: 12 }),
  fc.constantFrom("__proto__", "constructor", ""),
);

const { jsonValue } = fc.letrec<{ jsonValue: unknown }>((tie) => ({
  jsonValue: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("jsonValue"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("jsonValue"), { maxKeys: 4 }),
  ),
}));

// Cart-shaped bodies, so that a fair share of runs gets past validation and is paid.
// Decline methods are left out: a 402 is a stored answer, and this property is about nothing stored unless 201.
const sku = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...CATALOG.map((product) => product.sku)) },
  { weight: 1, arbitrary: hostileString },
);
const quantity = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 99 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: jsonValue },
);
const line = fc.oneof(
  { weight: 5, arbitrary: fc.record({ sku, quantity }) },
  { weight: 1, arbitrary: jsonValue },
);
const cart = fc.record(
  {
    cartId: fc.oneof(
      { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
      { weight: 1, arbitrary: hostileString },
      { weight: 1, arbitrary: jsonValue },
    ),
    items: fc.oneof(
      { weight: 5, arbitrary: fc.array(line, { minLength: 1, maxLength: 5 }) },
      { weight: 1, arbitrary: jsonValue },
    ),
    paymentMethod: fc.constantFrom("pm_card_visa", "pm_card_bogus", 42, null),
    total: fc.integer(),
    // Unknown fields are not validated, but they are stored with the key: the rules on NULs, surrogates and depth are all that guard them.
    extra: jsonValue,
  },
  { requiredKeys: ["cartId", "items"] },
);

// A valid cart with hostile values where nothing validates them (the cart id's
// content, an unknown field): only the JSON rules stand between these and the
// database, which refuses a NUL in jsonb.
const validLines = fc.array(
  fc.record({
    sku: fc.constantFrom(...CATALOG.map((product) => product.sku)),
    quantity: fc.integer({ min: 1, max: 99 }),
  }),
  { minLength: 1, maxLength: 5 },
);
const spliced = fc.record({
  cartId: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), hostileString),
  items: validLines,
  note: jsonValue,
});

// What JSON.stringify cannot write: numbers that overflow, nesting past the limit, text cut short.
const rawNumber = fc.constantFrom(
  "1e400",
  "-1e400",
  "123456789012345678901234567890",
  "-0",
  "1.0",
  "1E2",
  "0.5e1",
);
const rawBody = fc.oneof(
  { weight: 4, arbitrary: cart.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: spliced.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: jsonValue.map((value) => JSON.stringify(value) ?? "") },
  {
    weight: 1,
    arbitrary: rawNumber.map(
      (number) => `{"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":${number}}]}`,
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 200 })
      .map(
        (depth) =>
          `{"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":1}],"x":${"[".repeat(depth)}${"]".repeat(depth)}}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        cart.map((value) => JSON.stringify(value)),
        fc.nat(),
      )
      .map(([text, cut]) => text.slice(0, cut % (text.length + 1))),
  },
);

function checkout(account: ApiAccount, key: Buffer, body: string): WireRequest {
  return {
    method: "POST",
    path: "/api/orders",
    headers: [
      ["Authorization", `Bearer ${account.token}`],
      ["Content-Type", "application/json"],
      ["Idempotency-Key", key],
    ],
    body,
  };
}

function describeRequest(request: WireRequest): string {
  return JSON.stringify({
    headers: request.headers.map(([name, value]) => `${name}: ${value.toString("latin1")}`),
    body: request.body?.toString(),
  });
}

/** The invariants every answer keeps; says what the request did. */
async function expectInvariants(
  accountId: string,
  request: WireRequest,
  answer: WireResponse,
  before: Footprint,
): Promise<"paid" | "replayed" | "refused"> {
  expectNoServerError(answer, describeRequest(request));
  // A generated key can repeat an earlier run's: its replay adds nothing.
  const replayed = answer.headers["idempotent-replayed"] === "true";
  if (answer.status !== 201 || replayed) {
    expect(await footprintOf(accountId)).toEqual(before);
    return answer.status === 201 ? "replayed" : "refused";
  }
  const order = JSON.parse(answer.body);
  // Duplicate object keys: the server and JSON.parse agree that the last wins.
  const items = (
    JSON.parse(request.body!.toString()) as { items: { sku: string; quantity: number }[] }
  ).items;
  expect(order.amount).toBe(serverPrice(items));
  expect(await chargedAmount(accountId, order.payment.id)).toBe(order.amount);
  expect(await footprintOf(accountId)).toEqual(plusOnePaid(before));
  return "paid";
}

describe("any JSON body", () => {
  let account: ApiAccount;
  beforeAll(async () => {
    account = await createAccount();
  });

  it(
    "never a 5xx; every refusal is problem+json with its status and leaves nothing behind; every 201 charged the server's price",
    async () => {
      let paid = 0;
      await fc.assert(
        fc.asyncProperty(rawBody, async (body) => {
          const before = await footprintOf(account.id);
          const request = checkout(account, Buffer.from(randomUUID()), body);
          const answer = await sendWire(baseUrl(), request);

          if (answer.status !== 201) expectProblem(answer, answer.status);
          if ((await expectInvariants(account.id, request, answer, before)) === "paid") paid += 1;
        }),
        { seed: SEED, numRuns: NUM_RUNS },
      );
      // A property that never reached a payment would prove nothing about 201s.
      expect(paid).toBeGreaterThan(NUM_RUNS / 20);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// Node's parser refuses a field value with a control character other than
// HTAB before the app sees it (the front door answers malformed-request); CR and LF end the field early, so what follows
// is another field (or the body), and only the general invariants apply.
const PARSER_REFUSES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const ENDS_FIELD = /[\r\n]/;

// Header values: any code point (sent as UTF-8 bytes), printable ASCII around the length limit, and the quoted form.
const printableUnit = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));
const printable = fc.string({ unit: printableUnit, minLength: 1, maxLength: 60 });
const nearTheLimit = fc
  .integer({ min: 250, max: 260 })
  .chain((length) => fc.string({ unit: printableUnit, minLength: length, maxLength: length }));
const keyValue = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 40 }) },
  { weight: 2, arbitrary: printable },
  { weight: 1, arbitrary: nearTheLimit },
  { weight: 1, arbitrary: printable.map((key) => `"${key}"`) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(printable, fc.constantFrom(" ", "\t", ", ", ","))
      .map(([key, separator]) => `${key}${separator}${key}`),
  },
);

/** The key the contract says a bare value names, or undefined if it is not a valid bare key. */
function bareKey(value: string): string | undefined {
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, "");
  // A comma at either end is what a repeated field with an empty side leaves (packages/idempotency/src/key-header.ts).
  const valid =
    /^[\x21-\x7e]{1,255}$/.test(trimmed) &&
    !trimmed.startsWith('"') &&
    !trimmed.startsWith(",") &&
    !trimmed.endsWith(",");
  return valid ? trimmed : undefined;
}

describe("any Idempotency-Key value", () => {
  let account: ApiAccount;
  beforeAll(async () => {
    account = await createAccount();
  });

  it(
    "never a 5xx; a valid bare key is paid under exactly that key; anything else leaves nothing behind",
    async () => {
      await fc.assert(
        fc.asyncProperty(keyValue, async (value) => {
          const before = await footprintOf(account.id);
          const request = checkout(account, Buffer.from(value, "utf8"), validCart());
          const answer = await sendWire(baseUrl(), request);

          if (ENDS_FIELD.test(value)) {
            // Whatever the rest of the value turned into, it was not a 5xx and not a charge without a 201.
          } else if (PARSER_REFUSES.test(value)) {
            expectProblem(answer, 400, "/problems/malformed-request");
          } else if (answer.status !== 201) {
            expectProblem(answer, answer.status);
          }
          const outcome = await expectInvariants(account.id, request, answer, before);

          const expectedKey = ENDS_FIELD.test(value) ? undefined : bareKey(value);
          if (expectedKey !== undefined)
            expect(
              outcome,
              `the bare key ${JSON.stringify(expectedKey)} was refused: ${answer.body}`,
            ).not.toBe("refused");
          if (outcome === "paid") {
            // Runs are sequential, so the newest key is this run's.
            const stored = (await idempotencyKeysOf(account.id)).at(-1)!.key;
            expect(stored).toMatch(/^[\x21-\x7e]{1,255}$/);
            if (expectedKey !== undefined) expect(stored).toBe(expectedKey);
            expect(JSON.parse(answer.body).amount).toBe(serverPrice(VALID_ITEMS));
          }
        }),
        { seed: SEED, numRuns: NUM_RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
