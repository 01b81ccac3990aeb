import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { MAX_BODY_BYTES } from "@oncepay/idempotency/request";
import type { WireRequest } from "@/lib/testing/raw-http";

/**
 * The bad-input corpus: one entry per class of hostile or broken request to
 * POST /api/orders (and its neighbours), as data. Each entry is the request
 * in raw parts (method, path, header fields in order, body bytes), built from
 * a context the runner makes fresh for it, and what the contract (DESIGN.md,
 * docs/http-contract.md) says the answer is. The runner
 * (lib/api/bad-input-corpus.contract.test.ts) sends each over a socket and
 * checks the same invariants for all of them.
 *
 * Where the contract is silent, the entry's comment records the decision
 * (docs/http-contract.md, "Where the contract was silent").
 */
export type CorpusGroup =
  | "keys"
  | "framing"
  | "encodings"
  | "json-shapes"
  | "values"
  | "auth"
  | "tenants"
  | "methods"
  | "paths"
  | "forged-headers";

export interface CorpusContext {
  /** The account the class is sent as (or, for classes without credentials, the one that retries afterwards). */
  accountId: string;
  /** Its bearer token (API accounts). */
  token?: string;
  /** Its `Cookie` header and the session token in it (browser accounts). */
  cookie?: string;
  sessionToken?: string;
  /** A fresh Idempotency-Key: the one the class sends, where it sends a valid one, and the one the retry uses. */
  key: string;
  /** tenants: another account that paid with the same key first. */
  neighbour?: { accountId: string; token: string; orderId: string; orderText: string };
}

export type Expected =
  /** OncePay's own problem+json. */
  | { answer: "problem"; status: number; type: string }
  /** Paid at the server's price: 201 with the order. */
  | { answer: "paid"; amount: number; paymentMethod?: string }
  | { answer: "options"; allow: string }
  /** 200 and the caller's own orders (GET /api/orders): reading writes nothing. */
  | { answer: "orders-list" }
  /** Next.js's own trailing-slash redirect, before any handler runs. */
  | { answer: "redirect"; location: string };

export interface CorpusClass {
  name: string;
  group: CorpusGroup;
  /** Who the class is about: an API account (default) or a browser session. */
  signIn?: "api" | "browser";
  /** tenants: a neighbour account pays with the same key first. */
  neighbourPaysFirst?: boolean;
  request(context: CorpusContext): WireRequest;
  expected: Expected;
  /** A header the answer must carry as well (405's Allow, 401's challenge). */
  expectHeader?: [name: string, value: RegExp];
}

type Field = [string, string | Buffer];

// 2 × 1800 + 1450 in the server's catalog.
export const VALID_ITEMS = [
  { sku: "mug-ceramic-350", quantity: 2 },
  { sku: "beans-house-250", quantity: 1 },
];
const VALID_PRICE = 5050;
const MUG = { sku: "mug-ceramic-350", quantity: 1 };

export function validCart(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ cartId: "cart-corpus", items: VALID_ITEMS, ...overrides });
}

/** A cart with one line whose value is given as raw JSON text. */
const withLine = (line: string) => `{"cartId":"cart-corpus","items":[${line}]}`;
const withQuantity = (quantity: string) =>
  withLine(`{"sku":"mug-ceramic-350","quantity":${quantity}}`);

interface CheckoutParts {
  method?: string;
  path?: string;
  /** `null`: no Idempotency-Key field; an array: one field per value. */
  key?: string | Buffer | null | (string | Buffer)[];
  /** `null`: no Content-Type field. */
  contentType?: string | null;
  /** Replaces the bearer token. */
  credentials?: Field[];
  /** Sent after the usual fields. */
  extra?: Field[];
  body?: string | Buffer;
  endAfterSending?: boolean;
}

/** A checkout as a valid API client sends it, with the parts a class changes. */
function checkout(context: CorpusContext, parts: CheckoutParts = {}): WireRequest {
  const key = parts.key === undefined ? context.key : parts.key;
  const keys = key === null ? [] : Array.isArray(key) ? key : [key];
  const credentials =
    parts.credentials ??
    (context.token
      ? [["Authorization", `Bearer ${context.token}`] as Field]
      : [["Cookie", context.cookie!] as Field]);
  const contentType = parts.contentType === undefined ? "application/json" : parts.contentType;
  return {
    method: parts.method ?? "POST",
    path: parts.path ?? "/api/orders",
    headers: [
      ...credentials,
      ...(contentType === null ? [] : [["Content-Type", contentType] as Field]),
      ...keys.map((value): Field => ["Idempotency-Key", value]),
      ...(parts.extra ?? []),
    ],
    body: parts.body ?? validCart(),
    endAfterSending: parts.endAfterSending,
  };
}

const read =
  (path: string) =>
  (context: CorpusContext): WireRequest => ({
    method: "GET",
    path,
    headers: [["Authorization", `Bearer ${context.token}`]],
  });

const problem = (status: number, slug: string): Expected => ({
  answer: "problem",
  status,
  type: `/problems/${slug}`,
});
const invalidBody = problem(400, "invalid-body");
const malformedJson = problem(400, "malformed-json");
const unacceptableJson = problem(400, "unacceptable-json");
const keyInvalid = problem(400, "idempotency-key-invalid");
const unauthenticated = problem(401, "unauthenticated");
const crossSite = problem(403, "cross-site-request");
const notAllowed = problem(405, "method-not-allowed");
// Node's HTTP parser refuses the request before Next.js or any route sees it;
// the server's front door answers for it (lib/http/front-door.ts), with a
// problem type no route ever sends.
const parserRefuses = problem(400, "malformed-request");
const misdirected = problem(421, "misdirected-request");
const challenge: [string, RegExp] = ["www-authenticate", /^Bearer /];
const allowOrders: [string, RegExp] = ["allow", /^GET, POST, HEAD, OPTIONS$/];

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(
    parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))),
  );
const cartIdBytes = (inside: number[]) =>
  bytes('{"cartId":"', inside, '","items":[{"sku":"mug-ceramic-350","quantity":1}]}');

export const CORPUS: CorpusClass[] = [
  // Keys: 1–255 printable ASCII characters, bare or as an RFC 8941 string, one field.
  {
    group: "keys",
    name: "no Idempotency-Key",
    request: (c) => checkout(c, { key: null }),
    expected: problem(400, "idempotency-key-missing"),
  },
  {
    group: "keys",
    name: "an empty Idempotency-Key",
    request: (c) => checkout(c, { key: "" }),
    expected: problem(400, "idempotency-key-missing"),
  },
  {
    group: "keys",
    name: "a key of 256 characters",
    request: (c) => checkout(c, { key: c.key.padEnd(256, "k") }),
    expected: keyInvalid,
  },
  {
    group: "keys",
    name: "a key of 255 characters (the longest allowed)",
    request: (c) => checkout(c, { key: c.key.padEnd(255, "k") }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "keys",
    name: "a space inside the key",
    request: (c) => checkout(c, { key: `${c.key} x` }),
    expected: keyInvalid,
  },
  // HTAB is legal in a field value, so it reaches the key rules.
  {
    group: "keys",
    name: "a tab inside the key",
    request: (c) => checkout(c, { key: `${c.key}\tx` }),
    expected: keyInvalid,
  },
  {
    group: "keys",
    name: "a control character (0x01) in the key",
    request: (c) => checkout(c, { key: `${c.key}\u0001` }),
    expected: parserRefuses,
  },
  {
    group: "keys",
    name: "DEL (0x7f) in the key",
    request: (c) => checkout(c, { key: `${c.key}\u007f` }),
    expected: parserRefuses,
  },
  {
    group: "keys",
    name: "UTF-8 bytes in the key",
    request: (c) => checkout(c, { key: bytes(c.key, "-clé") }),
    expected: keyInvalid,
  },
  {
    group: "keys",
    name: "two Idempotency-Key fields",
    request: (c) => checkout(c, { key: [c.key, `${c.key}-2`] }),
    expected: problem(400, "idempotency-key-repeated"),
  },
  // Node joins the fields with ", " and the Fetch API trims the value, so
  // these two arrived as the key "k," (or ",k") and paid under it.
  {
    group: "keys",
    name: "two Idempotency-Key fields, the second empty",
    request: (c) => checkout(c, { key: [c.key, ""] }),
    expected: problem(400, "idempotency-key-repeated"),
  },
  {
    group: "keys",
    name: "two Idempotency-Key fields, the first empty",
    request: (c) => checkout(c, { key: ["", c.key] }),
    expected: problem(400, "idempotency-key-repeated"),
  },
  {
    group: "keys",
    name: "a quoted key without its closing quote",
    request: (c) => checkout(c, { key: `"${c.key}` }),
    expected: keyInvalid,
  },
  {
    group: "keys",
    name: "an empty quoted key",
    request: (c) => checkout(c, { key: '""' }),
    expected: keyInvalid,
  },
  {
    group: "keys",
    name: "an sf-list of two strings",
    request: (c) => checkout(c, { key: `"${c.key}", "other"` }),
    expected: problem(400, "idempotency-key-repeated"),
  },
  {
    group: "keys",
    name: "a quoted key with an escape RFC 8941 does not have (\\x)",
    request: (c) => checkout(c, { key: `"${c.key}\\x"` }),
    expected: keyInvalid,
  },
  // Decision: `:abc:` is an RFC 8941 byte sequence, but in the bare form
  // (Stripe's) every printable character is the key's own, so it is the
  // key ":abc:". Only a value that starts with a quote is parsed as RFC 8941.
  {
    group: "keys",
    name: "a byte sequence `:abc:` (a valid bare key)",
    request: (c) => checkout(c, { key: ":abc:" }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },

  // Framing: how many bytes the body has, and what it says it is.
  {
    group: "framing",
    name: "Content-Length larger than the body, and the client gives up",
    request: (c) =>
      checkout(c, {
        extra: [["Content-Length", String(validCart().length + 100)]],
        endAfterSending: true,
      }),
    expected: parserRefuses,
  },
  {
    group: "framing",
    name: "Content-Length over 16 KiB declared, only a little sent",
    request: (c) => checkout(c, { extra: [["Content-Length", String(MAX_BODY_BYTES + 1)]] }),
    expected: problem(413, "body-too-large"),
  },
  // The bytes after the declared length are read as the next request on
  // the connection: a pipelined GET here (which closes it), and garbage in
  // the class after. Node refuses any bytes after a `Connection: close` request.
  {
    group: "framing",
    name: "Content-Length smaller than the body, the rest a pipelined request",
    request: (c) =>
      checkout(c, {
        extra: [
          ["Connection", "keep-alive"],
          ["Content-Length", "20"],
        ],
        body: `${validCart().slice(0, 20)}GET /api/products HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      }),
    expected: malformedJson,
  },
  {
    group: "framing",
    name: "Content-Length smaller than the body, the rest garbage",
    request: (c) => checkout(c, { extra: [["Content-Length", "20"]] }),
    expected: parserRefuses,
  },
  {
    group: "framing",
    name: "Content-Length and Transfer-Encoding: chunked together",
    request: (c) => {
      const body = validCart();
      return checkout(c, {
        extra: [
          ["Content-Length", String(body.length)],
          ["Transfer-Encoding", "chunked"],
        ],
        body: `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      });
    },
    expected: parserRefuses,
  },
  {
    group: "framing",
    name: "two different Content-Length fields",
    request: (c) =>
      checkout(c, {
        extra: [
          ["Content-Length", String(validCart().length)],
          ["Content-Length", "5"],
        ],
      }),
    expected: parserRefuses,
  },
  {
    group: "framing",
    name: "a chunked body over 16 KiB (no length declared)",
    request: (c) => {
      const chunk = " ".repeat(4096);
      const chunks = Array.from({ length: 5 }, () => `1000\r\n${chunk}\r\n`).join("");
      return checkout(c, { extra: [["Transfer-Encoding", "chunked"]], body: `${chunks}0\r\n\r\n` });
    },
    expected: problem(413, "body-too-large"),
  },
  {
    group: "framing",
    name: "a body over 16 KiB, declared",
    request: (c) => checkout(c, { body: validCart({ cartId: "x".repeat(MAX_BODY_BYTES) }) }),
    expected: problem(413, "body-too-large"),
  },
  {
    group: "framing",
    name: "no Content-Type",
    request: (c) => checkout(c, { contentType: null }),
    expected: problem(415, "unsupported-media-type"),
  },
  {
    group: "framing",
    name: "Content-Type: text/plain",
    request: (c) => checkout(c, { contentType: "text/plain;charset=UTF-8" }),
    expected: problem(415, "unsupported-media-type"),
  },
  {
    group: "framing",
    name: "multipart/form-data",
    request: (c) =>
      checkout(c, {
        contentType: "multipart/form-data; boundary=b",
        body: `--b\r\nContent-Disposition: form-data; name="cart"\r\n\r\n${validCart()}\r\n--b--\r\n`,
      }),
    expected: problem(415, "unsupported-media-type"),
  },
  {
    group: "framing",
    name: "application/x-www-form-urlencoded",
    request: (c) =>
      checkout(c, {
        contentType: "application/x-www-form-urlencoded",
        body: "cartId=c1&items=mug",
      }),
    expected: problem(415, "unsupported-media-type"),
  },
  // Node keeps the first of a repeated Content-Type; the app sees text/plain.
  {
    group: "framing",
    name: "two Content-Type fields, text/plain first",
    request: (c) =>
      checkout(c, { contentType: "text/plain", extra: [["Content-Type", "application/json"]] }),
    expected: problem(415, "unsupported-media-type"),
  },
  {
    group: "framing",
    name: "a gzip-compressed body (Content-Encoding: gzip)",
    request: (c) =>
      checkout(c, { extra: [["Content-Encoding", "gzip"]], body: gzipSync(validCart()) }),
    expected: problem(415, "unsupported-media-type"),
  },
  // Labelled gzip but sent plain: read as JSON, it would mean one thing to us and another to a decoding proxy.
  {
    group: "framing",
    name: "Content-Encoding: gzip on a plain JSON body",
    request: (c) => checkout(c, { extra: [["Content-Encoding", "gzip"]] }),
    expected: problem(415, "unsupported-media-type"),
  },
  // RFC 8259 §8.1 lets a parser ignore a byte order mark; ours does (TextDecoder strips it).
  {
    group: "framing",
    name: "JSON behind a UTF-8 byte order mark",
    request: (c) => checkout(c, { body: bytes([0xef, 0xbb, 0xbf], validCart()) }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "framing",
    name: "an empty body",
    request: (c) => checkout(c, { body: "" }),
    expected: malformedJson,
  },
  {
    group: "framing",
    name: "an empty body, Content-Length: 0 declared",
    request: (c) => checkout(c, { body: "", extra: [["Content-Length", "0"]] }),
    expected: malformedJson,
  },
  // Node answered an unknown expectation with a bare 417.
  {
    group: "framing",
    name: "Expect: foo on a checkout",
    request: (c) => checkout(c, { extra: [["Expect", "foo"]] }),
    expected: problem(417, "expectation-failed"),
  },
  // A client cannot insist on a protocol switch: it is a checkout like any
  // other. Node closed the socket without an answer (HAProxy: a 502).
  {
    group: "framing",
    name: "Upgrade: h2c on a checkout",
    request: (c) =>
      checkout(c, {
        extra: [
          ["Connection", "Upgrade, HTTP2-Settings, close"],
          ["Upgrade", "h2c"],
          ["HTTP2-Settings", "AAMAAABkAAQCAAAAAAIAAAAA"],
        ],
      }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },

  // Encodings: the body must be UTF-8 JSON text.
  {
    group: "encodings",
    name: "invalid UTF-8 (a 0xFF byte)",
    request: (c) => checkout(c, { body: cartIdBytes([0xff]) }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "overlong UTF-8 (0xC0 0xAF for '/')",
    request: (c) => checkout(c, { body: cartIdBytes([0xc0, 0xaf]) }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "a UTF-16 surrogate encoded as UTF-8 bytes (CESU-8)",
    request: (c) => checkout(c, { body: cartIdBytes([0xed, 0xa0, 0x80]) }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "a UTF-16LE body with its byte order mark",
    request: (c) =>
      checkout(c, {
        body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(validCart(), "utf16le")]),
      }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "a UTF-16LE body without a byte order mark",
    request: (c) => checkout(c, { body: Buffer.from(validCart(), "utf16le") }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "a raw NUL byte inside a string",
    request: (c) => checkout(c, { body: cartIdBytes([0x61, 0x00]) }),
    expected: malformedJson,
  },
  {
    group: "encodings",
    name: "an escaped NUL (\\u0000) in the cart id",
    request: (c) =>
      checkout(c, {
        body: '{"cartId":"a\\u0000","items":[{"sku":"mug-ceramic-350","quantity":1}]}',
      }),
    expected: unacceptableJson,
  },
  {
    group: "encodings",
    name: "a lone surrogate escape (\\ud800) in a value",
    request: (c) => checkout(c, { body: validCart({ note: "\ud800" }) }),
    expected: unacceptableJson,
  },
  {
    group: "encodings",
    name: "a lone low surrogate escape in an object key",
    request: (c) =>
      checkout(c, {
        body: '{"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":1}],"\\udc00":1}',
      }),
    expected: unacceptableJson,
  },

  // JSON shapes: an object {cartId, items[], paymentMethod?}.
  {
    group: "json-shapes",
    name: "a top-level array",
    request: (c) => checkout(c, { body: `[${validCart()}]` }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "a top-level string",
    request: (c) => checkout(c, { body: JSON.stringify(validCart()) }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "a top-level number",
    request: (c) => checkout(c, { body: "5050" }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "a top-level null",
    request: (c) => checkout(c, { body: "null" }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "an empty object",
    request: (c) => checkout(c, { body: "{}" }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "items is an object, not an array",
    request: (c) => checkout(c, { body: validCart({ items: { 0: MUG } }) }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "items is empty",
    request: (c) => checkout(c, { body: validCart({ items: [] }) }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "items holds a null",
    request: (c) => checkout(c, { body: validCart({ items: [MUG, null] }) }),
    expected: invalidBody,
  },
  {
    group: "json-shapes",
    name: "items of 51 lines (one over the limit)",
    request: (c) =>
      checkout(c, { body: validCart({ items: Array.from({ length: 51 }, () => MUG) }) }),
    expected: invalidBody,
  },
  // 1000 lines do not fit in 16 KiB: the size limit answers first.
  {
    group: "json-shapes",
    name: "items of 1000 lines",
    request: (c) =>
      checkout(c, { body: validCart({ items: Array.from({ length: 1000 }, () => MUG) }) }),
    expected: problem(413, "body-too-large"),
  },
  {
    group: "json-shapes",
    name: "objects nested 40 levels deep",
    request: (c) =>
      checkout(c, {
        body: `${validCart().slice(0, -1)},"deep":${'{"a":'.repeat(40)}1${"}".repeat(40)}}`,
      }),
    expected: unacceptableJson,
  },
  // Decision: duplicate keys are not refused (JSON.parse cannot see them),
  // but the last one wins everywhere: in the price, the charge and the
  // fingerprint alike, so what is charged is what is stored.
  {
    group: "json-shapes",
    name: "duplicate keys: the last items wins, and is what is charged",
    request: (c) =>
      checkout(c, {
        body: `{"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":1}],"items":[{"sku":"kettle-gooseneck-1l","quantity":2}]}`,
      }),
    expected: { answer: "paid", amount: 2 * 5900 },
  },
  // JSON.parse makes "__proto__" an own property, so nothing is inherited:
  // neither a declined card nor another quantity.
  {
    group: "json-shapes",
    name: "__proto__ carrying a paymentMethod and a quantity",
    request: (c) =>
      checkout(c, {
        body: '{"__proto__":{"paymentMethod":"pm_card_chargeDeclined"},"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":1,"__proto__":{"quantity":50}}]}',
      }),
    expected: { answer: "paid", amount: 1800, paymentMethod: "pm_card_visa" },
  },
  {
    group: "json-shapes",
    name: "constructor.prototype carrying a paymentMethod",
    request: (c) =>
      checkout(c, {
        body: '{"constructor":{"prototype":{"paymentMethod":"pm_card_chargeDeclined"}},"cartId":"c","items":[{"sku":"mug-ceramic-350","quantity":1}]}',
      }),
    expected: { answer: "paid", amount: 1800, paymentMethod: "pm_card_visa" },
  },

  // Values.
  {
    group: "values",
    name: "quantity 1e400 (Infinity)",
    request: (c) => checkout(c, { body: withQuantity("1e400") }),
    expected: unacceptableJson,
  },
  {
    group: "values",
    name: "quantity -0",
    request: (c) => checkout(c, { body: withQuantity("-0") }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "quantity 0",
    request: (c) => checkout(c, { body: withQuantity("0") }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a negative quantity",
    request: (c) => checkout(c, { body: withQuantity("-3") }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a fractional quantity",
    request: (c) => checkout(c, { body: withQuantity("1.5") }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a quantity as a string",
    request: (c) => checkout(c, { body: withQuantity('"1"') }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "quantity 1e9",
    request: (c) => checkout(c, { body: withQuantity("1e9") }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a quantity beyond 2^53",
    request: (c) => checkout(c, { body: withQuantity("123456789012345678901234567890") }),
    expected: invalidBody,
  },
  // The cap of 99 is per product: two lines of one product are one line of their sum.
  {
    group: "values",
    name: "two lines of one product at the cap of 99 each",
    request: (c) =>
      checkout(c, {
        body: withLine(
          '{"sku":"mug-ceramic-350","quantity":99},{"sku":"mug-ceramic-350","quantity":99}',
        ),
      }),
    expected: invalidBody,
  },
  // 1.0 and 1e0 are the number 1 in JSON: the same request as quantity 1.
  {
    group: "values",
    name: "quantity written 1.0",
    request: (c) => checkout(c, { body: withQuantity("1.0") }),
    expected: { answer: "paid", amount: 1800 },
  },
  {
    group: "values",
    name: "an unknown sku",
    request: (c) => checkout(c, { body: withLine('{"sku":"espresso-machine-pro","quantity":1}') }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a sku with a NUL",
    request: (c) =>
      checkout(c, { body: withLine('{"sku":"mug-ceramic-350\\u0000","quantity":1}') }),
    expected: unacceptableJson,
  },
  {
    group: "values",
    name: "a sku that is a number",
    request: (c) => checkout(c, { body: withLine('{"sku":350,"quantity":1}') }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "cartId missing",
    request: (c) => checkout(c, { body: JSON.stringify({ items: VALID_ITEMS }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "cartId empty",
    request: (c) => checkout(c, { body: validCart({ cartId: "" }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "cartId only spaces",
    request: (c) => checkout(c, { body: validCart({ cartId: "   " }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "cartId of 101 characters",
    request: (c) => checkout(c, { body: validCart({ cartId: "c".repeat(101) }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "cartId a number",
    request: (c) => checkout(c, { body: validCart({ cartId: 42 }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "an unknown paymentMethod",
    request: (c) => checkout(c, { body: validCart({ paymentMethod: "pm_card_real_money" }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a paymentMethod that is not a string",
    request: (c) => checkout(c, { body: validCart({ paymentMethod: 42 }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "paymentMethod null",
    request: (c) => checkout(c, { body: validCart({ paymentMethod: null }) }),
    expected: invalidBody,
  },
  {
    group: "values",
    name: "a client-sent total, amount, currency and unit price (ignored: the server prices the cart)",
    request: (c) =>
      checkout(c, {
        body: JSON.stringify({
          cartId: "c",
          total: 1,
          amount: 1,
          currency: "jpy",
          items: [{ ...MUG, unitAmount: 1, amount: 1 }],
        }),
      }),
    expected: { answer: "paid", amount: 1800 },
  },

  // Auth: a bearer token, or the session cookie from the shop's own pages.
  {
    group: "auth",
    name: "no credentials",
    request: (c) => checkout(c, { credentials: [] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "a malformed bearer token",
    request: (c) => checkout(c, { credentials: [["Authorization", "Bearer hunter2"]] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "Basic instead of Bearer",
    request: (c) =>
      checkout(c, {
        credentials: [
          ["Authorization", `Basic ${Buffer.from(`user:${c.token}`).toString("base64")}`],
        ],
      }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "an unknown bearer token",
    request: (c) =>
      checkout(c, { credentials: [["Authorization", `Bearer opk_${"A".repeat(43)}`]] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "a session token used as a bearer token",
    signIn: "browser",
    request: (c) => checkout(c, { credentials: [["Authorization", `Bearer ${c.sessionToken}`]] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "a bearer token in the session cookie",
    request: (c) => checkout(c, { credentials: [["Cookie", `oncepay_session=${c.token}`]] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "a malformed session cookie",
    request: (c) => checkout(c, { credentials: [["Cookie", "oncepay_session=forged"]] }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  // Node keeps the first Authorization field and drops the rest, so the
  // first decides; a valid token behind a bad one does not get through.
  {
    group: "auth",
    name: "two Authorization fields, a bad one first",
    request: (c) =>
      checkout(c, {
        credentials: [
          ["Authorization", "Bearer hunter2"],
          ["Authorization", `Bearer ${c.token}`],
        ],
      }),
    expected: unauthenticated,
    expectHeader: challenge,
  },
  {
    group: "auth",
    name: "the cookie on a POST with Sec-Fetch-Site: cross-site",
    signIn: "browser",
    request: (c) => checkout(c, { extra: [["Sec-Fetch-Site", "cross-site"]] }),
    expected: crossSite,
  },
  {
    group: "auth",
    name: "the cookie on a POST with Sec-Fetch-Site: same-site (a sibling subdomain)",
    signIn: "browser",
    request: (c) => checkout(c, { extra: [["Sec-Fetch-Site", "same-site"]] }),
    expected: crossSite,
  },
  {
    group: "auth",
    name: "the cookie on a POST with a foreign Origin",
    signIn: "browser",
    request: (c) => checkout(c, { extra: [["Origin", "https://evil.example"]] }),
    expected: crossSite,
  },
  {
    group: "auth",
    name: "the cookie on a POST with Origin: null (a sandboxed frame)",
    signIn: "browser",
    request: (c) => checkout(c, { extra: [["Origin", "null"]] }),
    expected: crossSite,
  },

  // Tenants: keys and orders belong to one account.
  {
    group: "tenants",
    name: "account B sends account A's key and body: a new order for B, never A's answer",
    neighbourPaysFirst: true,
    request: (c) => checkout(c),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "tenants",
    name: "account B reads account A's order",
    neighbourPaysFirst: true,
    request: (c) => read(`/api/orders/${c.neighbour!.orderId}`)(c),
    expected: problem(404, "order-not-found"),
  },
  {
    group: "tenants",
    name: "account B reads a random order id",
    request: (c) => read(`/api/orders/${randomUUID()}`)(c),
    expected: problem(404, "order-not-found"),
  },
  {
    group: "tenants",
    name: "account B reads an id that is not a uuid",
    request: read("/api/orders/not-a-uuid"),
    expected: problem(404, "order-not-found"),
  },

  {
    group: "tenants",
    name: "account B lists orders: none of account A's",
    neighbourPaysFirst: true,
    request: read("/api/orders?limit=100"),
    expected: { answer: "orders-list" },
  },
  {
    group: "tenants",
    name: "account B pages after account A's order",
    neighbourPaysFirst: true,
    request: (c) => read(`/api/orders?starting_after=${c.neighbour!.orderId}`)(c),
    expected: problem(400, "invalid-query"),
  },
  {
    group: "tenants",
    name: "account B inspects account A's key",
    neighbourPaysFirst: true,
    request: (c) => read(`/api/keys/${c.key}`)(c),
    expected: problem(404, "idempotency-key-not-found"),
  },

  // Methods: /api/orders answers GET (the list, which ignores a key and a body) and POST; a key on anything else is ignored.
  ...["PUT", "PATCH", "DELETE"].map((method): CorpusClass => ({
    group: "methods",
    name: `${method} /api/orders with a key and a body`,
    request: (c) => checkout(c, { method }),
    expected: notAllowed,
    expectHeader: allowOrders,
  })),
  {
    group: "methods",
    name: "GET /api/orders with a key and a body: the list, nothing paid",
    request: (c) => checkout(c, { method: "GET" }),
    expected: { answer: "orders-list" },
  },
  {
    group: "methods",
    name: "HEAD /api/orders",
    request: (c) => ({ ...checkout(c, { method: "HEAD" }), body: "" }),
    expected: { answer: "orders-list" },
  },
  {
    group: "methods",
    name: "OPTIONS /api/orders",
    request: (c) => ({ ...checkout(c, { method: "OPTIONS" }), body: "" }),
    expected: { answer: "options", allow: "GET, POST, HEAD, OPTIONS" },
  },
  {
    group: "methods",
    name: "a method in lower case (post)",
    request: (c) => checkout(c, { method: "post" }),
    expected: parserRefuses,
  },
  {
    group: "methods",
    name: "a method HTTP does not know (BREW)",
    request: (c) => checkout(c, { method: "BREW" }),
    expected: parserRefuses,
  },
  {
    group: "methods",
    name: "POST /api/orders/ (a trailing slash)",
    request: (c) => checkout(c, { path: "/api/orders/" }),
    expected: { answer: "redirect", location: "/api/orders" },
  },

  ...["TRACE", "PROPFIND"].map((method): CorpusClass => ({
    group: "methods",
    name: `${method} /api/orders, a method Next.js's router cannot take (TRACE was its 500)`,
    request: (c) => checkout(c, { method }),
    expected: notAllowed,
    expectHeader: ["allow", /^GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS$/],
  })),

  // Paths that do not percent-decode: Next.js answered 500 before any of our
  // code ran (vercel/next.js#92527); OncePay's server refuses them first.
  ...["/api/orders/%ZZ", "/api/keys/%E0%A4%A", "/api/lab/storms/%C0%AF", "/keys/%E0%A4%A"].map(
    (path): CorpusClass => ({
      group: "paths",
      name: `GET ${path}`,
      request: read(path),
      expected: problem(400, "malformed-path"),
    }),
  ),
  {
    group: "paths",
    name: "POST to an undecodable path, with a key and a body",
    request: (c) => checkout(c, { path: "/api/orders/%ZZ" }),
    expected: problem(400, "malformed-path"),
  },
  // Request targets no browser sends (RFC 9112 3.2). Next.js answered
  // `OPTIONS *` with a bare 500 and any URL as the target with a 308 to it.
  {
    group: "paths",
    name: "OPTIONS * (the server as a whole)",
    request: (c) => ({ ...read("*")(c), method: "OPTIONS" }),
    expected: { answer: "options", allow: "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" },
  },
  {
    group: "paths",
    name: "POST * with a key and a body",
    request: (c) => checkout(c, { path: "*" }),
    expected: problem(400, "malformed-path"),
  },
  {
    group: "paths",
    name: "a checkout whose target is a URL of this host (absolute form, as to a proxy)",
    request: (c) => ({
      ...checkout(c, { path: "http://shop.test/api/orders" }),
      headers: [["Host", "shop.test"], ...checkout(c).headers],
    }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "paths",
    name: "a checkout whose target is a URL of another host",
    request: (c) => checkout(c, { path: "http://evil.example/api/orders" }),
    expected: misdirected,
  },
  ...["http://evil.example/api/health", "file:///etc/passwd", "https://evil.example/"].map(
    (target): CorpusClass => ({
      group: "paths",
      name: `GET ${target} as the target`,
      request: read(target),
      expected: misdirected,
    }),
  ),

  // Forged headers: none of them changes who pays, what, or where the order is.
  {
    group: "forged-headers",
    name: "X-Forwarded-For, X-Real-IP, Forwarded and X-Forwarded-Host spoofed",
    request: (c) =>
      checkout(c, {
        extra: [
          ["X-Forwarded-For", "203.0.113.7, 10.0.0.1"],
          ["X-Real-IP", "203.0.113.7"],
          ["Forwarded", "for=203.0.113.7;host=evil.example;proto=https"],
          ["X-Forwarded-Host", "evil.example"],
        ],
      }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "forged-headers",
    name: "a foreign Host",
    request: (c) => ({
      ...checkout(c),
      headers: [["Host", "evil.example"], ...checkout(c).headers],
    }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  // X-Forwarded-Host is not what "our own origin" is made of; a page cannot set Host.
  {
    group: "forged-headers",
    name: "the cookie with a foreign Origin and X-Forwarded-Host naming it",
    signIn: "browser",
    request: (c) =>
      checkout(c, {
        extra: [
          ["X-Forwarded-Host", "evil.example"],
          ["X-Forwarded-Proto", "https"],
          ["Origin", "https://evil.example"],
        ],
      }),
    expected: crossSite,
  },
  {
    group: "forged-headers",
    name: "X-HTTP-Method-Override: GET on a POST",
    request: (c) => checkout(c, { extra: [["X-HTTP-Method-Override", "GET"]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "forged-headers",
    name: "a client-sent Idempotent-Replayed: true",
    request: (c) => checkout(c, { extra: [["Idempotent-Replayed", "true"]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "forged-headers",
    name: "OncePay-Fault with an unknown name",
    request: (c) => checkout(c, { extra: [["OncePay-Fault", "explode"]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  {
    group: "forged-headers",
    name: "OncePay-Fault listing two faults",
    request: (c) => checkout(c, { extra: [["OncePay-Fault", "before-charge, after-charge"]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
  // Next.js's own request headers, which its parts pass between them: the
  // front door drops them, so the handler runs as for any checkout. With
  // x-middleware-prefetch: 1, Next.js answered 200 {} and charged nothing.
  ...(
    [
      ["x-middleware-prefetch", "1"],
      ["x-middleware-subrequest", "middleware:middleware:middleware:middleware:middleware"],
      ["x-invoke-path", "/api/health"],
      ["x-matched-path", "/api/health"],
      ["x-nextjs-data", "1"],
    ] as const
  ).map(([name, value]): CorpusClass => ({
    group: "forged-headers",
    name: `${name}: ${value} on a checkout`,
    request: (c) => checkout(c, { extra: [[name, value]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  })),
  // The shared test server runs without CRASH_FAULTS: a crash fault is ignored.
  {
    group: "forged-headers",
    name: "OncePay-Fault: crash-after-commit on a server without CRASH_FAULTS",
    request: (c) => checkout(c, { extra: [["OncePay-Fault", "crash-after-commit"]] }),
    expected: { answer: "paid", amount: VALID_PRICE },
  },
];

/**
 * /api/metrics spelt with a dot segment: Next.js resolves each, HAProxy's
 * path rules do not, so the balancer and the front door refuse them all.
 */
export const METRICS_DOT_SEGMENT_SPELLINGS = [
  "/api/../api/metrics",
  "/x/../api/metrics",
  "/%2e%2e/api/metrics",
  "/api/%2e/metrics",
  "/_next/static/../../api/metrics",
  "/api/./metrics",
  "/api/%2E%2E/api/metrics",
  "/api/.%2e/api/metrics",
];
