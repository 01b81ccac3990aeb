import { z } from "zod";
import { API_METHODS, allowHeader, type ApiMethod } from "@/lib/http/api-methods";
import { BALANCER_PROBLEMS } from "@/lib/http/balancer-problems";
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_EXPIRES_HEADER,
  KEY_POLICY_HEADER,
  PREFER_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER_HEADER,
  WWW_AUTHENTICATE_HEADER,
} from "@/lib/http/headers";
import { PROBLEM_CONTENT_TYPE, problemType } from "@/lib/http/problem-type";
import { REQUEST_PROBLEMS } from "@/lib/http/request-problems";
import { SERVER_PROBLEMS } from "@/lib/http/server-problems";
import {
  IDEMPOTENCY_KEY_FIELD_DESCRIPTION,
  IDEMPOTENCY_KEY_FIELD_PATTERN,
  MAX_KEY_LENGTH,
} from "@oncepay/idempotency/request";
import { duration } from "@/lib/openapi/duration";
import { OPERATION_EXAMPLES } from "@/lib/openapi/examples";
import {
  PATHS,
  type OperationSpec,
  type ResponseHeader,
  type ResponseSpec,
  type Responses,
} from "@/lib/openapi/operations";
import { REQUEST_SCHEMAS, RESPONSE_SCHEMAS } from "@/lib/openapi/schemas";
import { withExamples } from "@/lib/openapi/with-examples";

/**
 * The OpenAPI 3.1 document of OncePay's API, made from the operation table
 * (operations.ts) and the zod schemas the code parses requests with and
 * reads response types from: GET /api/openapi.json serves it, the API
 * reference page renders it, and the contract tests check every answer
 * against it. Each listed operation carries an example request and answer
 * (examples.ts).
 */

/** What the server keeps a key for: published with the key, as the Idempotency-Key draft asks. */
export interface KeyPolicy {
  /** How long a key, and the answer stored with it, is kept (IDEMPOTENCY_TTL_SECONDS). */
  retentionSeconds: number;
  /** How long one attempt holds a key before another may take it over (IDEMPOTENCY_LEASE_SECONDS). */
  leaseSeconds: number;
  /** The longest a request waits for another attempt that holds its key (KEY_WAIT_MAX_SECONDS). */
  maxWaitSeconds: number;
}

export type JsonObject = Record<string, unknown>;

export const OPENAPI_VERSION = "3.1.0";
export const COMPONENT_SCHEMA_PREFIX = "#/components/schemas/";

/**
 * Problems any operation can meet: the front door's, the route wrapper's,
 * the balancer's in front of several instances, authentication's and the
 * body reader's.
 */
/**
 * The Idempotency-Key header as the document describes it: the pattern the
 * engine's parser is tested against (packages/idempotency), in words too.
 */
const idempotencyKeyFieldSchema = z
  .string()
  .regex(IDEMPOTENCY_KEY_FIELD_PATTERN)
  .describe(IDEMPOTENCY_KEY_FIELD_DESCRIPTION);

const SHARED: Record<"every" | "balancer" | "authenticated" | "write" | "body", Responses> = {
  every: {
    400: {
      description:
        "The request is not valid HTTP/1.1, its path has a percent-encoding that is not UTF-8, or its target is * with a method other than OPTIONS.",
      problems: ["malformed-request", "malformed-path"],
    },
    417: {
      description:
        "The request has an Expect other than 100-continue, which the server cannot meet.",
      problems: ["expectation-failed"],
    },
    421: {
      description:
        "The request target is a URL of another host or scheme (absolute form, as to a proxy): the server answers only for its own, and never redirects there.",
      problems: ["misdirected-request"],
    },
    431: {
      description: "The request's header fields are larger than the server reads.",
      problems: ["header-fields-too-large"],
    },
    500: {
      description:
        "Something failed on our side. A keyed request may be retried with the same key; it will not charge twice.",
      problems: [SERVER_PROBLEMS["internal-error"].slug],
    },
    503: {
      description: "The database cannot be reached. Retry after Retry-After seconds.",
      problems: [SERVER_PROBLEMS["database-unavailable"].slug],
      required: ["Retry-After"],
    },
  },
  // A client of several instances talks to the balancer, which answers
  // these itself (lib/cluster/haproxy.ts): 502 carries Retry-After too, but
  // the checkout's own 502 does not, so here it is only allowed.
  balancer: {
    502: {
      description:
        "Behind the balancer: the instance serving the request stopped before it answered. Retry with the same key after Retry-After seconds; it will not charge twice.",
      problems: [BALANCER_PROBLEMS[502].slug],
      optional: ["Retry-After"],
    },
    503: {
      description:
        "Behind the balancer: no instance is ready (none can reach its database). Retry after Retry-After seconds.",
      problems: [BALANCER_PROBLEMS[503].slug],
      required: ["Retry-After"],
    },
    504: {
      description:
        "Behind the balancer: the instance serving the request did not answer in time. Retry with the same key after Retry-After seconds; it will not charge twice.",
      problems: [BALANCER_PROBLEMS[504].slug],
      required: ["Retry-After"],
    },
  },
  authenticated: {
    401: {
      description:
        "No usable credential: send a bearer token (POST /api/accounts makes one). A browser that sent more than one session cookie (another site on the host set one) is trusted as neither; the answer expires the extra ones, so the next request works.",
      problems: [REQUEST_PROBLEMS.unauthenticated.slug, REQUEST_PROBLEMS["several-sessions"].slug],
      required: ["WWW-Authenticate"],
      optional: ["Set-Cookie"],
    },
    429: {
      description:
        "Past a rate limit (this account's, or its address's for new accounts). Retry after Retry-After seconds; a keyed request may reuse its key.",
      problems: [REQUEST_PROBLEMS["rate-limited"].slug],
      required: ["Retry-After"],
    },
  },
  write: {
    403: {
      description: "A session cookie on a request another site made.",
      problems: [REQUEST_PROBLEMS["cross-site"].slug],
    },
  },
  body: {
    400: {
      description:
        "The body is cut off, not JSON, JSON the server does not accept (duplicate names, lone surrogates, too deep), or not a valid request (`errors` names the fields).",
      problems: ["body-incomplete", "malformed-json", "unacceptable-json", "invalid-body"].map(
        (kind) => REQUEST_PROBLEMS[kind as keyof typeof REQUEST_PROBLEMS].slug,
      ),
    },
    413: {
      description: "The body is larger than the server reads.",
      problems: [REQUEST_PROBLEMS["body-too-large"].slug],
    },
    415: {
      description: "The body is not sent as JSON (Content-Type: application/json).",
      problems: [REQUEST_PROBLEMS["unsupported-media-type"].slug],
    },
  },
};

/** Several descriptions of one status merged: every problem any of them names, every header one of them promises. */
function mergeResponses(...sets: Responses[]): Responses {
  const merged: Responses = {};
  for (const set of sets) {
    for (const [status, spec] of Object.entries(set) as [string, ResponseSpec][]) {
      const code = Number(status);
      const earlier = merged[code];
      merged[code] = earlier
        ? {
            ...earlier,
            ...spec,
            description: `${earlier.description} Or: ${spec.description}`,
            problems: [...new Set([...(earlier.problems ?? []), ...(spec.problems ?? [])])],
            required: [...new Set([...(earlier.required ?? []), ...(spec.required ?? [])])],
            optional: [...new Set([...(earlier.optional ?? []), ...(spec.optional ?? [])])],
          }
        : spec;
    }
  }
  return merged;
}

function allResponses(method: string, operation: OperationSpec): Responses {
  return mergeResponses(
    operation.responses,
    operation.authenticated ? SHARED.authenticated : {},
    operation.authenticated && method !== "get" ? SHARED.write : {},
    operation.requestBody ? SHARED.body : {},
    SHARED.every,
    SHARED.balancer,
  );
}

/** IMF-fixdate (RFC 9110), as Date's toUTCString writes it. */
const HTTP_DATE_PATTERN =
  "^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$";

const HEADER_SCHEMAS: Record<ResponseHeader | typeof REQUEST_ID_HEADER, JsonObject> = {
  "X-Request-Id": {
    description:
      "This attempt's id, on every answer (the Idempotency-Key names the intent, this the attempt): quote it when reporting a problem.",
    schema: { type: "string" },
  },
  Location: { description: "Where the created resource is read.", schema: { type: "string" } },
  "Retry-After": {
    description: "Seconds to wait before sending the request again (with the same key).",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "Idempotent-Replayed": {
    description: "`true` on an answer replayed from a completed key rather than computed now.",
    schema: { type: "string", enum: ["true"] },
  },
  "Idempotency-Key-Expires": {
    description:
      "When the key and its stored answer are forgotten (an HTTP date): a retry after it is a new request. Stop retrying well before it.",
    schema: { type: "string", pattern: HTTP_DATE_PATTERN },
  },
  "Preference-Applied": {
    description:
      "`wait=N` on an answer for which the server waited, as Prefer asked, for another attempt that held the key (N: the longest it would have).",
    schema: { type: "string", pattern: "^wait=[0-9]+$" },
  },
  "Idempotency-Key-Policy": {
    description:
      "The server's key policy, in seconds: how long a key is kept from its first request (retention) and how long an attempt holds it (lease).",
    schema: { type: "string", pattern: "^retention=[0-9]+, lease=[0-9]+$" },
  },
  "WWW-Authenticate": {
    description: "The challenge: a bearer token.",
    schema: { type: "string" },
  },
  Allow: { description: "The methods this path answers.", schema: { type: "string" } },
  Link: {
    description:
      'On a problem: the page that explains it (what happened, what to do), `<type>; rel="describedby"; type="text/html"`.',
    schema: { type: "string", pattern: '^</problems/[a-z0-9-]+>; rel="describedby"' },
  },
  "Set-Cookie": {
    description:
      "On a 401 for a request with more than one session cookie: expiries of every session cookie but the shop's own (host-only, Path=/), one header each.",
    schema: { type: "string" },
  },
};

function headersObject(spec: ResponseSpec): JsonObject {
  const entry = (name: keyof typeof HEADER_SCHEMAS, required: boolean) => [
    name,
    { ...HEADER_SCHEMAS[name], required },
  ];
  return Object.fromEntries([
    entry(REQUEST_ID_HEADER, true),
    ...(spec.required ?? []).map((name) => entry(name, true)),
    ...(spec.problems && !spec.required?.includes("Link") ? [entry("Link", false)] : []),
    ...(spec.optional ?? [])
      .filter((name) => !spec.required?.includes(name))
      .map((name) => entry(name, false)),
  ]);
}

function problemContent(status: number, slugs: readonly string[]): JsonObject {
  return {
    [PROBLEM_CONTENT_TYPE]: {
      schema: {
        allOf: [
          { $ref: `${COMPONENT_SCHEMA_PREFIX}Problem` },
          {
            type: "object",
            properties: {
              type: { enum: slugs.map(problemType) },
              status: { const: status },
            },
          },
        ],
      },
    },
  };
}

function responseObject(status: number, spec: ResponseSpec, withContent = true): JsonObject {
  if (status === 204) return { description: spec.description, headers: headersObject(spec) };
  const content = spec.problems
    ? problemContent(status, spec.problems)
    : spec.text
      ? { "text/plain": { schema: { type: "string" } } }
      : {
          "application/json": {
            schema: spec.body
              ? { $ref: `${COMPONENT_SCHEMA_PREFIX}${spec.body}` }
              : { type: "object" },
          },
        };
  return {
    description: spec.description,
    headers: headersObject(spec),
    ...(withContent && { content }),
  };
}

function responsesObject(responses: Responses, withContent = true): JsonObject {
  return Object.fromEntries(
    Object.entries(responses).map(([status, spec]) => [
      status,
      responseObject(Number(status), spec!, withContent),
    ]),
  );
}

function keyParameter(operation: OperationSpec, policy: KeyPolicy): JsonObject[] {
  if (operation.idempotencyKey === "lab") {
    return [
      {
        name: IDEMPOTENCY_KEY_HEADER,
        in: "header",
        required: true,
        description: `This lab design reads the header raw: 1 to ${MAX_KEY_LENGTH} characters.`,
        schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH },
      },
    ];
  }
  if (operation.idempotencyKey !== "required") return [];
  return [
    {
      name: IDEMPOTENCY_KEY_HEADER,
      in: "header",
      required: true,
      description: `${idempotencyKeyFieldSchema.description} ${keyPolicyText(policy)}`,
      schema: jsonSchemaOf(idempotencyKeyFieldSchema, "input"),
    },
    {
      name: PREFER_HEADER,
      in: "header",
      required: false,
      description: `\`wait=N\` (RFC 7240): when another attempt holds the key, wait up to N seconds (at most ${policy.maxWaitSeconds}) for its answer, and get it as a replay with Preference-Applied, instead of a 409 at once. A release of the key lets this request run it itself; at the deadline it gets the 409.`,
      schema: { type: "string" },
      example: `wait=${policy.maxWaitSeconds}`,
    },
  ];
}

/** The key policy in words, as the operation's key parameter and the reference page state it. */
export function keyPolicyText(policy: KeyPolicy): string {
  return `The server keeps each key, with the answer it produced, for ${duration(policy.retentionSeconds)} after its first request; a retry within that time gets that answer again, and after it the key is forgotten. An attempt holds its key for a lease of ${duration(policy.leaseSeconds)}: a retry while the lease runs gets 409 with Retry-After; a retry after an attempt died with its lease run out takes the key over and finishes the purchase, never charging twice. A key belongs to the account that sent it, and is bound to the request's method, path and body.`;
}

function queryParameters(limits: NonNullable<OperationSpec["listQuery"]>): JsonObject[] {
  return [
    {
      name: "limit",
      in: "query",
      description: `How many items, 1 to ${limits.maxLimit} (default ${limits.defaultLimit}).`,
      schema: {
        type: "integer",
        minimum: 1,
        maximum: limits.maxLimit,
        default: limits.defaultLimit,
      },
    },
    {
      name: "starting_after",
      in: "query",
      description: "The id of the last item of the previous page: this page starts after it.",
      schema: { type: "string", format: "uuid" },
    },
  ];
}

function operationObject(method: string, operation: OperationSpec, policy: KeyPolicy): JsonObject {
  const parameters = [
    ...(operation.pathParameter
      ? [
          {
            name: operation.pathParameter.name,
            in: "path",
            required: true,
            description: operation.pathParameter.description,
            schema: { type: "string" },
          },
        ]
      : []),
    ...keyParameter(operation, policy),
    ...(operation.listQuery ? queryParameters(operation.listQuery) : []),
  ];
  return withExamples(
    operation.operationId,
    {
      operationId: operation.operationId,
      tags: [operation.tag],
      summary: operation.summary,
      ...(operation.description && { description: operation.description }),
      ...(operation.authenticated && { security: [{ bearerToken: [] }, { sessionCookie: [] }] }),
      ...(parameters.length > 0 && { parameters }),
      ...(operation.requestBody && {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { $ref: `${COMPONENT_SCHEMA_PREFIX}${operation.requestBody}` },
            },
          },
        },
      }),
      ...(operation.idempotencyKey === "required" && {
        "x-idempotency-key": {
          header: IDEMPOTENCY_KEY_HEADER,
          required: true,
          retentionSeconds: policy.retentionSeconds,
          leaseSeconds: policy.leaseSeconds,
          fingerprint: ["method", "path", "body"],
          scope: "account",
        },
      }),
      responses: responsesObject(allResponses(method, operation)),
    },
    OPERATION_EXAMPLES[operation.operationId],
  );
}

/** The methods a path does not serve: each answers 405 with Allow (api-methods.ts); OPTIONS answers 204. */
function otherMethods(path: string, served: ApiMethod[]): JsonObject {
  const allow = allowHeader(served);
  const notServed = (method: ApiMethod): [string, JsonObject] => [
    method.toLowerCase(),
    {
      operationId: `${operationIdOf(path)}${method[0]}${method.slice(1).toLowerCase()}NotAllowed`,
      tags: ["Not served"],
      summary: `Not served: ${path} answers ${allow}`,
      responses: responsesObject(
        mergeResponses(
          {
            405: {
              description: `${method} is not served here.`,
              problems: ["method-not-allowed"],
              required: ["Allow"],
            },
          },
          SHARED.every,
          SHARED.balancer,
        ),
      ),
    },
  ];
  return Object.fromEntries([
    ...API_METHODS.filter((method) => !served.includes(method)).map(notServed),
    traceNotServed(path),
    [
      "options",
      {
        operationId: `${operationIdOf(path)}Options`,
        tags: ["Not served"],
        summary: `The methods ${path} answers`,
        responses: responsesObject(
          mergeResponses(
            { 204: { description: `No body; Allow: ${allow}.`, required: ["Allow"] } },
            SHARED.every,
            SHARED.balancer,
          ),
        ),
      },
    ],
  ]);
}

/**
 * TRACE, and every method OpenAPI 3.1 cannot name (PROPFIND, BREW, …): the
 * front door refuses them before routing (lib/http/front-door.ts), with an
 * Allow of every method any path serves.
 */
function traceNotServed(path: string): [string, JsonObject] {
  return [
    "trace",
    {
      operationId: `${operationIdOf(path)}TraceNotAllowed`,
      tags: ["Not served"],
      summary: "Not served, nor any method OpenAPI cannot name (PROPFIND, …)",
      responses: responsesObject(
        mergeResponses(
          {
            405: {
              description: "No path answers this method.",
              problems: ["method-not-allowed"],
              required: ["Allow"],
            },
          },
          SHARED.every,
          SHARED.balancer,
        ),
      ),
    },
  ];
}

function operationIdOf(path: string): string {
  return path
    .replace(/^\/api\//, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)))
    .join("");
}

function pathItem(path: string, policy: KeyPolicy): JsonObject {
  const spec = PATHS[path]!;
  const served = API_METHODS.filter((method) => spec[method.toLowerCase() as keyof typeof spec]);
  const item: JsonObject = {};
  for (const [method, operation] of Object.entries(spec)) {
    item[method] = operationObject(method, operation, policy);
    // Next.js answers HEAD from GET: the same statuses and headers, no body.
    if (method === "get") {
      item.head = {
        operationId: `${operation.operationId}Head`,
        tags: [operation.tag],
        summary: `${operation.summary} (headers only)`,
        ...(operation.authenticated && { security: [{ bearerToken: [] }, { sessionCookie: [] }] }),
        responses: responsesObject(allResponses("get", operation), false),
      };
    }
  }
  // The served methods (and HEAD) first, then the 405s, then OPTIONS.
  return { ...item, ...otherMethods(path, served) };
}

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without the keys a component may not carry. */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonObject {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonObject;
  delete converted.$schema;
  return converted;
}

function componentSchemas(): JsonObject {
  const requests = Object.entries(REQUEST_SCHEMAS).map(([name, schema]) => [
    name,
    jsonSchemaOf(schema, "input"),
  ]);
  const responses = Object.entries(RESPONSE_SCHEMAS).map(([name, schema]) => [
    name,
    jsonSchemaOf(schema, "output"),
  ]);
  return Object.fromEntries([...requests, ...responses]);
}

export function openApiDocument(policy: KeyPolicy): JsonObject {
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "OncePay API",
      version: "1",
      summary: "A checkout that charges exactly once: the Idempotency-Key pattern over HTTP.",
      description: `Every error is RFC 9457 problem details (${PROBLEM_CONTENT_TYPE}) whose \`type\` is the path of the page that explains it, /problems/<slug>, which each problem answer also links (Link, rel="describedby"). Every answer carries ${REQUEST_ID_HEADER}. POST /api/orders takes an ${IDEMPOTENCY_KEY_HEADER}: one per purchase, the same on every retry of it. ${keyPolicyText(policy)} A replayed answer carries ${IDEMPOTENT_REPLAYED_HEADER}: true; every answer a key's row gives or keeps carries ${KEY_EXPIRES_HEADER} and ${KEY_POLICY_HEADER} (when the key is forgotten, and the policy); 409, 429, 503 and 504 carry ${RETRY_AFTER_HEADER}; 401 carries ${WWW_AUTHENTICATE_HEADER}. Behind the balancer that spreads requests over several instances, the balancer answers 502, 503 and 504 itself, as problem details with ${RETRY_AFTER_HEADER}: retry with the same key. A method OpenAPI cannot name (PROPFIND, …) gets the 405 that TRACE gets; a path with a trailing slash is redirected (308) to the path without it.`,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/", description: "This server" }],
    tags: [
      { name: "Checkout", description: "The purchase, exactly once." },
      { name: "Orders", description: "What was bought, and what is on sale." },
      { name: "Keys", description: "An Idempotency-Key's life, inspected." },
      { name: "Accounts", description: "Credentials for API clients." },
      { name: "Webhooks", description: "The payment provider's events, acted on once." },
      { name: "Demo", description: "Faults to switch on for a demo (DEMO_FAULTS=on)." },
      { name: "Lab", description: "The strategy lab: designs raced against each other." },
      { name: "Operations", description: "What operators and balancers ask." },
      { name: "Contract", description: "This document." },
      { name: "Not served", description: "Methods a path does not answer (405), and OPTIONS." },
    ],
    paths: Object.fromEntries(Object.keys(PATHS).map((path) => [path, pathItem(path, policy)])),
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearerToken: {
          type: "http",
          scheme: "bearer",
          description: "The token POST /api/accounts hands out.",
        },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: "oncepay_session",
          description:
            "The shop's session, set by its pages (__Host-oncepay_session over HTTPS). Writes must come from the shop's own origin.",
        },
      },
    },
  };
}
