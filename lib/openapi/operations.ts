import { BALANCER_PROBLEMS } from "@/lib/http/balancer-problems";
import { LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import type { RequestSchemaName, ResponseSchemaName } from "@/lib/openapi/schemas";

/**
 * Every operation of the API, as data: what it takes and every answer it
 * can give. document.ts turns this into the OpenAPI document, adding what
 * every operation shares (the route wrapper's 500 and 503, the front door's
 * 400, the balancer's 502, 503 and 504, the 401 and 429 of authentication,
 * the body reader's 400, 413 and 415); the contract tests check each real answer against the result
 * (lib/testing/openapi-check.ts), so an answer missing here fails them.
 */

/** A response header the contract names. */
export type ResponseHeader =
  | "Location"
  | "Retry-After"
  | "Idempotent-Replayed"
  | "Idempotency-Key-Expires"
  | "Idempotency-Key-Policy"
  | "Preference-Applied"
  | "WWW-Authenticate"
  | "Allow"
  | "Set-Cookie"
  | "Link";

export interface ResponseSpec {
  description: string;
  /** A JSON body of this schema (application/json), unless `problems` says it is a problem. */
  body?: ResponseSchemaName;
  /** A problem+json body: the slugs of its possible `type` URNs. */
  problems?: readonly string[];
  /** Prometheus's text format. */
  text?: true;
  required?: readonly ResponseHeader[];
  optional?: readonly ResponseHeader[];
}

export type Responses = Partial<Record<number, ResponseSpec>>;

export interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tag:
    | "Checkout"
    | "Orders"
    | "Keys"
    | "Accounts"
    | "Webhooks"
    | "Demo"
    | "Lab"
    | "Operations"
    | "Contract";
  /** Signed-in only: bearer token or the shop's session cookie (401, 403 cross-site, 429 when refused). */
  authenticated: boolean;
  /** How the operation reads Idempotency-Key: OncePay's rules, a lab design's own, or not at all. */
  idempotencyKey?: "required" | "lab";
  requestBody?: RequestSchemaName;
  listQuery?: { defaultLimit: number; maxLimit: number };
  pathParameter?: { name: string; description: string };
  responses: Responses;
}

export type Method = "get" | "post" | "put";

export type PathSpec = Partial<Record<Method, OperationSpec>>;

const RETRY_AFTER = ["Retry-After"] as const;
/** On every answer the key's row gave or keeps: when the key is forgotten, and the policy. */
const KEY_LIFETIME = ["Idempotency-Key-Expires", "Idempotency-Key-Policy"] as const;
/** On an answer stored with its key: a replay says so (and whether it waited for it), and each tells the key's lifetime. */
const STORED = ["Idempotent-Replayed", "Preference-Applied", ...KEY_LIFETIME] as const;

/** What every attempt under a key can get back besides its own result: the key's row answers. */
const KEYED_ANSWERS: Responses = {
  409: {
    description:
      "Another attempt with this key has not finished. Retry with the same key after Retry-After seconds to get its result.",
    problems: ["request-in-progress"],
    required: RETRY_AFTER,
    optional: ["Preference-Applied", ...KEY_LIFETIME],
  },
  422: {
    description:
      "The key was used for a different request (method, path or body), or reused after it expired for a cart whose payment the provider still remembers. Use a new key for a new request.",
    problems: ["idempotency-key-reused", "idempotency-key-expired"],
    optional: STORED,
  },
};

/** The 400 of an operation that requires an Idempotency-Key (the body's own 400s are every operation's). */
const KEY_HEADER_PROBLEMS: ResponseSpec = {
  description: "Idempotency-Key missing, malformed or sent more than once.",
  problems: ["idempotency-key-missing", "idempotency-key-invalid", "idempotency-key-repeated"],
  required: ["Link"],
};

const PAYMENT_ANSWERS: Responses = {
  402: {
    description:
      "The card was declined and nothing was charged. The decline is the key's result: a retry with the same key replays it. Another card is a new checkout with a new key.",
    problems: ["payment-declined"],
    optional: STORED,
  },
  502: {
    description: "The payment provider refused the request itself (not a decline).",
    problems: ["dependency-rejected"],
  },
  503: {
    description:
      "The payment provider did not answer. Nothing was charged twice: retry with the same key after Retry-After seconds.",
    problems: ["dependency-unavailable"],
    required: RETRY_AFTER,
  },
};

const ORDER_LIST_LIMITS = { defaultLimit: 10, maxLimit: 100 };

/** The 403 of everything that runs only with demo faults on. */
const DEMO_FAULTS_OFF = {
  description: "This server runs without DEMO_FAULTS=on.",
  problems: ["demo-faults-disabled"],
} as const;

function labWebhookDesign(operationId: string, name: string, what: string): OperationSpec {
  return {
    operationId,
    tag: "Lab",
    summary: `The lab's "${name}" webhook handler`,
    description: `A webhook handler of the lab's webhook storms, switched on only with DEMO_FAULTS=on. It checks the signature as POST /api/webhooks/stripe does. ${what}`,
    authenticated: false,
    requestBody: "StripeEvent",
    responses: {
      200: { description: "Taken: what the event did.", body: "WebhookReceipt" },
      400: {
        description:
          "The Stripe-Signature is missing, does not verify, or is over five minutes old.",
        problems: ["webhook-signature-invalid"],
      },
      403: DEMO_FAULTS_OFF,
      503: {
        description: "This server has no webhook secret.",
        problems: ["webhook-not-configured"],
        required: RETRY_AFTER,
      },
    },
  };
}

function labDesign(operationId: string, name: string, keyed: boolean): OperationSpec {
  return {
    operationId,
    tag: "Lab",
    summary: `The lab's "${name}" checkout`,
    description:
      "A checkout of the strategy lab, run for comparison and switched on only with DEMO_FAULTS=on. It takes the checkout's body and answers as the checkout does, but with its own key handling: do not copy it.",
    authenticated: true,
    ...(keyed && { idempotencyKey: "lab" as const }),
    requestBody: "CheckoutRequest",
    responses: {
      201: {
        description: "Paid: the order (or, from a design that replays, a stored answer).",
        body: "Order",
        optional: ["Location", "Idempotent-Replayed"],
      },
      ...(keyed && {
        400: {
          description: "The key is missing or too long.",
          problems: ["idempotency-key-invalid"],
        },
        ...KEYED_ANSWERS,
      }),
      ...PAYMENT_ANSWERS,
      403: DEMO_FAULTS_OFF,
      503: {
        description:
          "The design's key store or the payment provider did not answer. Retry after Retry-After seconds.",
        problems: ["dependency-unavailable"],
        required: RETRY_AFTER,
      },
    },
  };
}

const labPath = (strategy: keyof typeof LAB_STRATEGY_INFO) => LAB_STRATEGY_INFO[strategy].endpoint;

export const PATHS: Record<string, PathSpec> = {
  "/api/orders": {
    post: {
      operationId: "createOrder",
      tag: "Checkout",
      summary: "Check out a cart, exactly once",
      description:
        "Prices the cart from the catalog and charges it once per Idempotency-Key. Send the same key with every retry of one purchase: the first attempt to claim the key charges; a retry after it finished gets its answer again (the same status and body, with Idempotent-Replayed: true); a retry while it runs gets 409 with Retry-After.",
      authenticated: true,
      idempotencyKey: "required",
      requestBody: "CheckoutRequest",
      responses: {
        201: {
          description:
            "Paid: the order, with when its key is forgotten. A replay of it carries Idempotent-Replayed: true.",
          body: "Order",
          required: ["Location", ...KEY_LIFETIME],
          optional: ["Idempotent-Replayed", "Preference-Applied"],
        },
        202: {
          description:
            "The card's bank asks the shopper to authenticate (3-D Secure): the order is pending, and `nextAction.url` is the bank's page. This is the key's answer: a replay gives it again. The provider's event (POST /api/webhooks/stripe), or the recovery worker, settles the order; GET /api/orders/{id} tells how it ended.",
          body: "Order",
          required: ["Location", ...KEY_LIFETIME],
          optional: ["Idempotent-Replayed", "Preference-Applied"],
        },
        400: KEY_HEADER_PROBLEMS,
        ...KEYED_ANSWERS,
        422: { ...KEYED_ANSWERS[422]!, required: ["Link"] },
        ...PAYMENT_ANSWERS,
      },
    },
    get: {
      operationId: "listOrders",
      tag: "Orders",
      summary: "This account's orders, newest first",
      authenticated: true,
      listQuery: ORDER_LIST_LIMITS,
      responses: {
        200: { description: "A page of orders.", body: "OrderList" },
        400: {
          description: "An unknown, repeated or invalid query parameter.",
          problems: ["invalid-query"],
        },
      },
    },
  },
  "/api/orders/{id}": {
    get: {
      operationId: "getOrder",
      tag: "Orders",
      summary: "One of this account's orders",
      authenticated: true,
      pathParameter: { name: "id", description: "The order's id." },
      responses: {
        200: { description: "The order.", body: "Order" },
        404: {
          description: "No such order for this account (another account's order looks the same).",
          problems: ["order-not-found"],
        },
      },
    },
  },
  "/api/orders/{id}/webhooks": {
    get: {
      operationId: "getOrderWebhooks",
      tag: "Orders",
      summary: "The provider's deliveries about an order, and its shipments",
      description:
        "Every verified delivery of the provider's events about the order's payment, oldest first, with what each did: the one that settled it, and the duplicates and late copies that changed nothing. Beside them, how many times the order shipped.",
      authenticated: true,
      pathParameter: { name: "id", description: "The order's id." },
      responses: {
        200: { description: "The deliveries and shipments.", body: "OrderWebhooks" },
        404: {
          description: "No such order for this account (another account's order looks the same).",
          problems: ["order-not-found"],
        },
      },
    },
  },
  "/api/orders/{id}/refunds": {
    post: {
      operationId: "createRefund",
      tag: "Orders",
      summary: "Refund an order, all or part, exactly once",
      description:
        "Refunds `amount` (or, without it, all that is left) of one of this account's paid orders, once per Idempotency-Key, as a checkout charges once. Refunds of one order under different keys, sent at once, never add up to more than was charged: each reserves its amount before the provider hears of it, and one that asks for more than is left gets 422.",
      authenticated: true,
      idempotencyKey: "required",
      requestBody: "RefundRequest",
      pathParameter: { name: "id", description: "The order's id." },
      responses: {
        201: {
          description:
            "Refunded, with when its key is forgotten. A replay of it carries Idempotent-Replayed: true.",
          body: "Refund",
          required: KEY_LIFETIME,
          optional: ["Idempotent-Replayed", "Preference-Applied"],
        },
        400: KEY_HEADER_PROBLEMS,
        404: {
          description:
            "No paid order of this account's by that id (another account's order looks the same). Nothing was refunded.",
          problems: ["order-not-found"],
          optional: STORED,
        },
        409: KEYED_ANSWERS[409],
        422: {
          description:
            "More than is left to refund (counting refunds still in flight), the provider refused the refund, or the key was used for a different request or reused after it expired. Nothing was refunded by this request.",
          problems: [
            "refund-exceeds-balance",
            "refund-refused",
            "idempotency-key-reused",
            "idempotency-key-expired",
          ],
          optional: STORED,
        },
        502: PAYMENT_ANSWERS[502],
        503: {
          description:
            "The payment provider did not answer. Nothing is refunded twice: retry with the same key after Retry-After seconds.",
          problems: ["dependency-unavailable"],
          required: RETRY_AFTER,
        },
      },
    },
  },
  "/api/webhooks/stripe": {
    post: {
      operationId: "receiveStripeWebhook",
      tag: "Webhooks",
      summary: "The payment provider's events, each acted on once",
      description:
        "Where the provider posts its events (payment_intent.succeeded, payment_intent.payment_failed, charge.refunded), at least once, duplicated and in any order. Each is verified with the Stripe SDK's own check on the raw body (`Stripe-Signature`, the endpoint's `whsec_` secret, at most five minutes old) and acted on once: its id is recorded in the same transaction as the change it makes. A duplicate, or an event older than the state it would change, is a 200 that changes nothing.",
      authenticated: false,
      requestBody: "StripeEvent",
      responses: {
        200: { description: "Taken: what the event did.", body: "WebhookReceipt" },
        400: {
          description:
            "The Stripe-Signature is missing, does not verify with this endpoint's secret, or is over five minutes old; or the signed body is not an event. Nothing was done.",
          problems: ["webhook-signature-invalid"],
        },
        503: {
          description:
            "The event is about one of the shop's payments that its checkout has not recorded yet, or the server has no webhook secret. Nothing was done: deliver it again after Retry-After seconds.",
          problems: ["payment-not-recorded-yet", "webhook-not-configured"],
          required: RETRY_AFTER,
        },
      },
    },
  },
  "/api/purchases/{cartId}": {
    get: {
      operationId: "getPurchase",
      tag: "Orders",
      summary: "One purchase: the orders of one cart and what the provider charged for them",
      description:
        "Every order this account has for the cart, and the successful charges the payment provider holds for them, counted from its own records. A purchase is right when it comes to one order and one charge; a cart paid without an Idempotency-Key and retried comes to more.",
      authenticated: true,
      pathParameter: {
        name: "cartId",
        description: "The cartId the orders were paid with, percent-encoded as any path segment.",
      },
      responses: {
        200: { description: "The purchase.", body: "Purchase" },
        404: {
          description:
            "No order of this account has this cart (another account's cart looks the same).",
          problems: ["purchase-not-found"],
        },
      },
    },
  },
  "/api/keys/{key}": {
    get: {
      operationId: "getIdempotencyKey",
      tag: "Keys",
      summary: "One of this account's Idempotency-Keys, inspected",
      description:
        "The key's row (state, recovery point, lease, expiry), what it produced, and what the payment provider holds under it. A checkout's key (`operation: checkout`) made an order, and the provider holds PaymentIntents under it; a refund's key (`operation: refund`) made a refund row, and the provider holds the refunded order's refunds made under it. Each operation has its own recovery points.",
      authenticated: true,
      pathParameter: {
        name: "key",
        description: "The Idempotency-Key, percent-encoded as any path segment.",
      },
      responses: {
        200: { description: "The key.", body: "IdempotencyKey" },
        404: {
          description: "No such key for this account, or it expired and was deleted.",
          problems: ["idempotency-key-not-found"],
        },
      },
    },
  },
  "/api/accounts": {
    post: {
      operationId: "createAccount",
      tag: "Accounts",
      summary: "A demo account for API clients",
      description: "The bearer token is shown once; only its hash is kept.",
      authenticated: false,
      responses: {
        201: { description: "The account and its token.", body: "Account" },
        429: {
          description: "This address created too many accounts in the window.",
          problems: ["rate-limited"],
          required: RETRY_AFTER,
        },
      },
    },
  },
  "/api/products": {
    get: {
      operationId: "listProducts",
      tag: "Orders",
      summary: "The catalog the server prices carts from",
      authenticated: false,
      responses: { 200: { description: "Every product.", body: "ProductList" } },
    },
  },
  "/api/demo/settings": {
    get: {
      operationId: "getDemoSettings",
      tag: "Demo",
      summary: "This account's demo faults",
      authenticated: true,
      responses: { 200: { description: "The settings.", body: "DemoSettings" } },
    },
    put: {
      operationId: "putDemoSettings",
      tag: "Demo",
      summary: "Switch this account's demo faults",
      authenticated: true,
      requestBody: "DemoSettingsRequest",
      responses: {
        200: { description: "The settings now.", body: "DemoSettings" },
        403: DEMO_FAULTS_OFF,
      },
    },
  },
  "/api/demo/webhook-redeliveries": {
    post: {
      operationId: "redeliverOrderWebhooks",
      tag: "Demo",
      summary: "Have the provider deliver an order's events again: duplicates, at once and late",
      description:
        'The "Duplicate webhooks" demo: the local payment simulator delivers each event of the order\'s payment ten times at once, then three more times 1.5 s later, to POST /api/webhooks/stripe. GET /api/orders/{id}/webhooks shows what each delivery did; the order still ships once.',
      authenticated: true,
      requestBody: "WebhookRedeliveryRequest",
      responses: {
        200: {
          description: "Delivered: the burst has been answered, the late copies are on their way.",
          body: "WebhookRedelivery",
        },
        403: DEMO_FAULTS_OFF,
        404: {
          description: "No such order for this account.",
          problems: ["order-not-found"],
        },
        409: {
          description:
            "The order has no payment, or this server does not run on the local simulator with its admin key.",
          problems: ["redelivery-unavailable"],
        },
      },
    },
  },
  "/api/lab/storms": {
    post: {
      operationId: "startLabRun",
      tag: "Lab",
      summary: "Start a storm or a crash run of the strategy lab",
      authenticated: true,
      requestBody: "LabRunRequest",
      responses: {
        201: {
          description: "The run, with what to send.",
          body: "LabStorm",
          required: ["Location"],
        },
        403: DEMO_FAULTS_OFF,
      },
    },
    get: {
      operationId: "listLabRuns",
      tag: "Lab",
      summary: "The latest 20 lab runs, newest first, each with its report",
      authenticated: true,
      responses: { 200: { description: "The runs.", body: "LabStormList" } },
    },
  },
  "/api/lab/latest-runs": {
    get: {
      operationId: "listLatestLabRunsOfEachDesign",
      tag: "Lab",
      summary: "Each design's latest storm and latest crash run, however many runs came since",
      description:
        "At most one storm and one crash run per strategy, newest first, each with its report; the list is always whole (has_more is false).",
      authenticated: true,
      responses: { 200: { description: "The runs.", body: "LabStormList" } },
    },
  },
  "/api/lab/storms/{id}": {
    get: {
      operationId: "getLabRun",
      tag: "Lab",
      summary: "One lab run's report",
      authenticated: true,
      pathParameter: { name: "id", description: "The run's id." },
      responses: {
        200: { description: "The report.", body: "LabStorm" },
        404: { description: "No such run for this account.", problems: ["lab-storm-not-found"] },
      },
    },
  },
  "/api/lab/webhook-storms": {
    post: {
      operationId: "startLabWebhookStorm",
      tag: "Lab",
      summary:
        "Start a webhook storm: one pending order, then its events many times and out of order",
      description:
        "Makes one pending order of the lab's own (its payment at no provider) and answers with what to send: the success event `size` times at once, then late copies of it mixed with an older failure of the same payment, each signed with the webhook secret, to the design's endpoint. Only with DEMO_FAULTS=on.",
      authenticated: true,
      requestBody: "LabWebhookStormRequest",
      responses: {
        201: {
          description: "The storm, with what to send.",
          body: "LabWebhookStorm",
          required: ["Location"],
        },
        403: DEMO_FAULTS_OFF,
        503: {
          description: "This server has no webhook secret, so no delivery could be verified.",
          problems: ["webhook-not-configured"],
        },
      },
    },
    get: {
      operationId: "listLabWebhookStorms",
      tag: "Lab",
      summary: "Each webhook design's latest storm, newest first",
      authenticated: true,
      responses: {
        200: { description: "The storms.", body: "LabWebhookStormList" },
        403: DEMO_FAULTS_OFF,
      },
    },
  },
  "/api/lab/webhook-storms/{id}": {
    get: {
      operationId: "getLabWebhookStorm",
      tag: "Lab",
      summary: "One webhook storm's report: the order's shipments and status",
      authenticated: true,
      pathParameter: { name: "id", description: "The storm's id." },
      responses: {
        200: { description: "The report.", body: "LabWebhookStorm" },
        403: DEMO_FAULTS_OFF,
        404: { description: "No such storm for this account.", problems: ["lab-storm-not-found"] },
      },
    },
  },
  "/api/lab/webhooks/event-record": {
    post: labWebhookDesign(
      "labEventRecordWebhook",
      "Event record (OncePay)",
      "The shop's own webhook code, on the lab's payments: each event's id recorded in the transaction of its change.",
    ),
  },
  "/api/lab/webhooks/no-event-record": {
    post: labWebhookDesign(
      "labNoEventRecordWebhook",
      "No event record",
      "Acts on every delivery: a duplicate ships again, and an older event delivered late undoes a newer one. Do not copy it.",
    ),
  },
  [labPath("no_key")]: { post: labDesign("labNoKeyCheckout", "No key", false) },
  [labPath("check_then_insert")]: {
    post: labDesign("labCheckThenInsertCheckout", "Check, then insert", true),
  },
  [labPath("claim_after_charge")]: {
    post: labDesign("labClaimAfterChargeCheckout", "Claim after the charge", true),
  },
  [labPath("dynamodb_key_store")]: {
    post: labDesign("labDynamoDbCheckout", "Key store on DynamoDB", true),
  },
  [labPath("redis_key_store")]: { post: labDesign("labRedisCheckout", "Key store on Redis", true) },
  [labPath("powertools")]: { post: labDesign("labPowertoolsCheckout", "Powertools", true) },
  "/api/health": {
    get: {
      operationId: "health",
      tag: "Operations",
      summary: "The process is up",
      authenticated: false,
      responses: { 200: { description: "Up.", body: "Health" } },
    },
  },
  "/api/ready": {
    get: {
      operationId: "ready",
      tag: "Operations",
      summary: "The instance can serve (its database answers)",
      authenticated: false,
      responses: {
        200: { description: "Ready.", body: "Ready" },
        503: {
          description: "Not ready: its database does not answer. Retry after Retry-After seconds.",
          problems: ["not-ready"],
          required: RETRY_AFTER,
        },
      },
    },
  },
  "/api/metrics": {
    get: {
      operationId: "metrics",
      tag: "Operations",
      summary: "This instance's metrics, in Prometheus's text format",
      authenticated: false,
      responses: {
        200: { description: "The metrics.", text: true },
        404: {
          description:
            "Asked through the balancer, which keeps each instance's metrics to the instance: read them from each instance.",
          problems: [BALANCER_PROBLEMS[404].slug],
        },
      },
    },
  },
  "/api/openapi.json": {
    get: {
      operationId: "openApiDocument",
      tag: "Contract",
      summary: "This document",
      authenticated: false,
      responses: { 200: { description: "The OpenAPI document." } },
    },
  },
};
