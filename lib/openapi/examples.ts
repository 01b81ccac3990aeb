import type { z } from "zod";
import { keyLifetimeHeaders } from "@oncepay/idempotency";
import { KEY_EXPIRES_HEADER, KEY_POLICY_HEADER } from "@/lib/http/headers";
import { describedByLink } from "@/lib/http/problem-type";
import { problemDetailsFor } from "@/lib/idempotency/outcomes";
import { CATALOG } from "@/lib/orders/catalog";
import type { ResponseHeader } from "@/lib/openapi/operations";
import type { REQUEST_SCHEMAS, RESPONSE_SCHEMAS } from "@/lib/openapi/schemas";

/**
 * One example request and its answers for every operation the reference
 * lists, written into the OpenAPI document (parameter, header and media-type
 * `example`s) and shown on /docs/api. Each value is typed by the zod schema
 * the document's schema is made from, and examples.test.ts checks every one
 * against the document's own schemas, so an example cannot drift from what
 * the API reads and writes. The values are real answers of a local run,
 * shortened.
 */

type RequestBody<Name extends keyof typeof REQUEST_SCHEMAS> = z.input<
  (typeof REQUEST_SCHEMAS)[Name]
>;
type ResponseBody<Name extends keyof typeof RESPONSE_SCHEMAS> = z.output<
  (typeof RESPONSE_SCHEMAS)[Name]
>;

export interface AnswerExample {
  status: number;
  /** Values of the answer's headers; X-Request-Id is added to every answer. */
  headers?: Partial<Record<ResponseHeader, string>>;
  /** A JSON body (application/json or, for an error, application/problem+json). */
  body?: unknown;
  /** A text/plain body. */
  text?: string;
}

export interface OperationExample {
  /** Values of the operation's path, query and header parameters, by name. */
  parameters?: Record<string, string | number>;
  requestBody?: unknown;
  /** The first is the answer the reference shows beside the request. */
  answers: AnswerExample[];
}

export const EXAMPLE_REQUEST_ID = "1cdb3d23-3cc4-41a6-9ea0-086f560ce38e";
const KEY = "7f0c5a2e-6b1d-4d8e-9a4f-3c2b1a0d9e8f";
const ORDER_ID = "3c307779-97df-416d-99cd-9c76dd5fdf1e";
const ORDER_LOCATION = `/api/orders/${ORDER_ID}`;
const STORM_ID = "727bbbce-5775-4f4d-ae96-ad621da39b9a";
const PAYMENT_ID = "pi_6YoOORn8Y6bSbRq3ty5TSsq2";

const checkoutRequest: RequestBody<"CheckoutRequest"> = {
  cartId: "cart-2f9d1c",
  items: [
    { sku: "mug-ceramic-350", quantity: 2 },
    { sku: "beans-house-250", quantity: 1 },
  ],
  paymentMethod: "pm_card_visa",
};

const order: ResponseBody<"Order"> = {
  id: ORDER_ID,
  object: "order",
  status: "paid",
  idempotencyKey: KEY,
  source: "checkout",
  cartId: "cart-2f9d1c",
  currency: "usd",
  amount: 5050,
  items: [
    { sku: "mug-ceramic-350", name: "Stoneware Mug", unitAmount: 1800, quantity: 2, amount: 3600 },
    {
      sku: "beans-house-250",
      name: "House Blend Beans",
      unitAmount: 1450,
      quantity: 1,
      amount: 1450,
    },
  ],
  payment: {
    id: PAYMENT_ID,
    status: "succeeded",
    paymentMethod: "pm_card_visa",
    refundedAmount: 0,
  },
  createdAt: "2026-12-06T02:00:37.544Z",
};

const orderList: ResponseBody<"OrderList"> = { object: "list", data: [order], has_more: true };

const keyInspection: ResponseBody<"IdempotencyKey"> = {
  object: "idempotency_key",
  key: KEY,
  operation: "checkout",
  state: "complete",
  recoveryPoint: "finished",
  reached: {
    claimed: "2026-12-06T02:00:37.477Z",
    paymentStarted: "2026-12-06T02:00:37.477Z",
    charged: "2026-12-06T02:00:37.553Z",
    finished: "2026-12-06T02:00:37.553Z",
  },
  lease: null,
  expiresAt: "2026-12-07T02:00:37.477Z",
  fingerprint: "6caca37772a72e8bfcac244915bb41f9877b74bd387c0d302c36df11c0421f44",
  request: { method: "POST", path: "/api/orders" },
  response: { status: 201 },
  providerKey: "oncepay:1ed913ab-33be-4296-aaa9-d6a40a30d5cc:Qm0ORO7WstCFJftUtTiwQfsrIzGez5Y8",
  provider: {
    available: true,
    paymentIntents: [
      {
        id: PAYMENT_ID,
        status: "succeeded",
        amount: 5050,
        currency: "usd",
        createdAt: "2026-12-06T02:00:38.000Z",
        charges: [
          {
            id: "ch_g6L2srAY7dc4PeCIVSOjuZyP",
            status: "succeeded",
            amount: 5050,
            failureCode: null,
            createdAt: "2026-12-06T02:00:38.000Z",
          },
        ],
      },
    ],
  },
  order: {
    id: ORDER_ID,
    location: ORDER_LOCATION,
    amount: 5050,
    currency: "usd",
    createdAt: "2026-12-06T02:00:37.544Z",
  },
  payments: [
    {
      providerPaymentId: PAYMENT_ID,
      status: "succeeded",
      amount: 5050,
      currency: "usd",
      declineCode: null,
      settledBy: null,
      events: [
        {
          eventId: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a",
          type: "payment_intent.succeeded",
          outcome: "unchanged",
          receivedAt: "2026-12-06T02:00:38.412Z",
        },
      ],
    },
  ],
  requests: {
    seen: 2,
    notKept: 0,
    data: [
      {
        attempt: 1,
        requestId: EXAMPLE_REQUEST_ID,
        receivedAt: "2026-12-06T02:00:37.470Z",
        answeredAt: "2026-12-06T02:00:37.560Z",
        status: 201,
        answer: "completed",
      },
      {
        attempt: 2,
        requestId: "5b0e8f0c-8f7e-4d0b-9a55-3f6f2f1d6c21",
        receivedAt: "2026-12-06T02:00:39.102Z",
        answeredAt: "2026-12-06T02:00:39.109Z",
        status: 201,
        answer: "replay",
      },
    ],
  },
};

const purchase: ResponseBody<"Purchase"> = {
  object: "purchase",
  cartId: "cart-2f9d1c",
  orders: [order],
  charges: { counted: true, charges: 1, amountCharged: 5050, currency: "usd" },
  verdict: "charged-once",
};

const stormKey = "ee964f5a-b59b-4a7c-8224-5ee7a91d54b1";
const stormCart = "cart_208288db-9cdd-434f-afa6-5af4f776f2ea";
const storm: ResponseBody<"LabStorm"> = {
  object: "lab_storm",
  id: STORM_ID,
  kind: "storm",
  strategy: "atomic_claim",
  size: 10,
  createdAt: "2026-12-06T02:00:44.776Z",
  idempotencyKey: stormKey,
  cartId: stormCart,
  request: {
    method: "POST",
    path: "/api/orders",
    headers: { "Content-Type": "application/json", "Idempotency-Key": stormKey },
    body: {
      cartId: stormCart,
      items: [{ sku: "mug-ceramic-350", quantity: 1 }],
      paymentMethod: "pm_card_visa",
    },
  },
  crash: null,
  orders: 1,
  provider: { available: true, charges: 1, declined: 0, amountCharged: 1800 },
  currency: "usd",
};

const stormList: ResponseBody<"LabStormList"> = { object: "list", data: [storm], has_more: false };

const demoSettings: ResponseBody<"DemoSettings"> = {
  networkDelayMs: 1500,
  loseResponse: false,
  faultsEnabled: true,
};

// What a retry gets while the first attempt still holds the key: made by the
// code that answers it, so the example says what the server says.
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;
const inProgress = problemDetailsFor({
  kind: "in-flight",
  retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS,
});

// The example key's life, as the engine writes it: claimed when the example
// order was made, kept for the default 24 hours, with the default lease.
const keyLifetime = keyLifetimeHeaders({
  expiresAt: new Date(Date.parse(order.createdAt) + 86_400_000),
  retentionSeconds: 86_400,
  leaseSeconds: 30,
});
const KEY_LIFETIME = {
  "Idempotency-Key-Expires": keyLifetime[KEY_EXPIRES_HEADER]!,
  "Idempotency-Key-Policy": keyLifetime[KEY_POLICY_HEADER]!,
};

/** A lab design's checkout: it takes and answers what the checkout does. */
function labExample(keyed: boolean): OperationExample {
  return {
    ...(keyed && { parameters: { "Idempotency-Key": KEY } }),
    requestBody: checkoutRequest,
    answers: [{ status: 201, headers: { Location: ORDER_LOCATION }, body: order }],
  };
}

const REFUND_KEY = "0b5e7c1d-2f43-4a8e-b9d6-58c1e0a7f3b2";

const refund: ResponseBody<"Refund"> = {
  id: "9a4d2b7e-31c5-4f08-8e6a-d2b5c7f1e093",
  object: "refund",
  orderId: ORDER_ID,
  status: "succeeded",
  amount: 1450,
  currency: "usd",
  providerRefundId: "re_3QkYVn2bS8dLhN4rT6wXpZ1a",
  createdAt: "2026-12-06T02:04:11.208Z",
};

const WEBHOOK_STORM_ID = "5c0b8e2f-7d14-4a93-b6e1-2f8c9d0a4e71";
const LAB_PAYMENT_INTENT = "pi_lab_3f9a1c7e5b2d8f04a6c1e9b7";
const webhookStorm: ResponseBody<"LabWebhookStorm"> = {
  object: "lab_webhook_storm",
  id: WEBHOOK_STORM_ID,
  design: "event_record",
  size: 10,
  createdAt: "2026-12-07T10:12:03.118Z",
  orderId: ORDER_ID,
  paymentIntent: LAB_PAYMENT_INTENT,
  request: null,
  deliveries: 16,
  status: "paid",
  shipments: 1,
  outcome: "held",
  sentence:
    "Of 16 deliveries, the first of the success settled the order and shipped it; every copy found its event recorded, and the older failure found the payment already succeeded: one shipment, order paid.",
};
const labWebhookEvent = {
  id: "evt_lab_s_5c0b8e2f7d144a93b6e12f8c9d0a4e71",
  object: "event",
  type: "payment_intent.succeeded",
  created: 1_796_522_438,
  data: { object: { id: LAB_PAYMENT_INTENT, object: "payment_intent", status: "succeeded" } },
} satisfies RequestBody<"StripeEvent">;

export const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  createRefund: {
    parameters: { id: ORDER_ID, "Idempotency-Key": REFUND_KEY },
    requestBody: { amount: 1450 } satisfies RequestBody<"RefundRequest">,
    answers: [
      { status: 201, headers: KEY_LIFETIME, body: refund },
      {
        status: 422,
        headers: { ...KEY_LIFETIME, Link: describedByLink("/problems/refund-exceeds-balance") },
        body: {
          type: "/problems/refund-exceeds-balance",
          title: "Refund larger than what is left to refund",
          status: 422,
          detail: `Order ${ORDER_ID} has 3600 of 5050 usd (minor units) left to refund, counting refunds still in progress; this request asked for 5050. Nothing was refunded: send a new request, with a new Idempotency-Key, for at most 3600.`,
        },
      },
    ],
  },
  createOrder: {
    parameters: { "Idempotency-Key": KEY },
    requestBody: checkoutRequest,
    answers: [
      { status: 201, headers: { Location: ORDER_LOCATION, ...KEY_LIFETIME }, body: order },
      {
        status: 409,
        headers: {
          "Retry-After": String(IN_FLIGHT_RETRY_AFTER_SECONDS),
          ...KEY_LIFETIME,
          Link: describedByLink(inProgress.type),
        },
        body: inProgress,
      },
    ],
  },
  listOrders: {
    parameters: { limit: 1 },
    answers: [{ status: 200, body: orderList }],
  },
  getOrder: {
    parameters: { id: ORDER_ID },
    answers: [{ status: 200, body: order }],
  },
  getOrderWebhooks: {
    parameters: { id: ORDER_ID },
    answers: [
      {
        status: 200,
        body: {
          object: "order_webhooks",
          orderId: ORDER_ID,
          shipments: 1,
          deliveries: [
            {
              eventId: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a",
              type: "payment_intent.succeeded",
              outcome: "paid",
              receivedAt: "2026-12-07T10:00:38.412Z",
            },
            {
              eventId: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a",
              type: "payment_intent.succeeded",
              outcome: "duplicate",
              receivedAt: "2026-12-07T10:00:39.530Z",
            },
          ],
        } satisfies ResponseBody<"OrderWebhooks">,
      },
    ],
  },
  getPurchase: {
    parameters: { cartId: "cart-2f9d1c" },
    answers: [{ status: 200, body: purchase }],
  },
  getIdempotencyKey: {
    parameters: { key: KEY },
    answers: [{ status: 200, body: keyInspection }],
  },
  createAccount: {
    answers: [
      {
        status: 201,
        body: {
          id: "1ed913ab-33be-4296-aaa9-d6a40a30d5cc",
          token: "opk_pRUmqr7OnPq1E4mhcwJ6it6QPssqzFM23MDKmE8Z5Fg",
        } satisfies ResponseBody<"Account">,
      },
    ],
  },
  listProducts: {
    answers: [
      {
        status: 200,
        body: {
          object: "list",
          data: [CATALOG[0]!],
          has_more: false,
        } satisfies ResponseBody<"ProductList">,
      },
    ],
  },
  getDemoSettings: { answers: [{ status: 200, body: demoSettings }] },
  putDemoSettings: {
    requestBody: {
      networkDelayMs: 1500,
      loseResponse: false,
    } satisfies RequestBody<"DemoSettingsRequest">,
    answers: [{ status: 200, body: demoSettings }],
  },
  redeliverOrderWebhooks: {
    requestBody: { orderId: ORDER_ID } satisfies RequestBody<"WebhookRedeliveryRequest">,
    answers: [
      {
        status: 200,
        body: {
          object: "webhook_redelivery",
          orderId: ORDER_ID,
          events: [{ id: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a", type: "payment_intent.succeeded" }],
          copiesPerEvent: 13,
        } satisfies ResponseBody<"WebhookRedelivery">,
      },
    ],
  },
  startLabWebhookStorm: {
    requestBody: {
      design: "event_record",
      size: 10,
    } satisfies RequestBody<"LabWebhookStormRequest">,
    answers: [
      {
        status: 201,
        headers: { Location: `/api/lab/webhook-storms/${WEBHOOK_STORM_ID}` },
        body: {
          ...webhookStorm,
          request: {
            endpoint: "/api/lab/webhooks/event-record",
            waves: [
              [
                {
                  eventId: labWebhookEvent.id,
                  type: labWebhookEvent.type,
                  copies: 10,
                  body: JSON.stringify(labWebhookEvent),
                  signature:
                    "t=1796522438,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
                },
              ],
            ],
          },
          status: "pending",
          shipments: 0,
          outcome: null,
          sentence: "Nothing delivered yet: the order waits for its events.",
        },
      },
    ],
  },
  listLabWebhookStorms: {
    answers: [{ status: 200, body: { object: "list", data: [webhookStorm], has_more: false } }],
  },
  getLabWebhookStorm: {
    parameters: { id: WEBHOOK_STORM_ID },
    answers: [{ status: 200, body: webhookStorm }],
  },
  labEventRecordWebhook: {
    requestBody: labWebhookEvent,
    answers: [
      { status: 200, body: { received: true, eventId: labWebhookEvent.id, outcome: "paid" } },
    ],
  },
  labNoEventRecordWebhook: {
    requestBody: labWebhookEvent,
    answers: [
      { status: 200, body: { received: true, eventId: labWebhookEvent.id, outcome: "paid" } },
    ],
  },
  startLabRun: {
    requestBody: { strategy: "atomic_claim", size: 10 } satisfies RequestBody<"LabRunRequest">,
    answers: [{ status: 201, headers: { Location: `/api/lab/storms/${STORM_ID}` }, body: storm }],
  },
  listLabRuns: {
    answers: [
      {
        status: 200,
        body: stormList,
      },
    ],
  },
  listLatestLabRunsOfEachDesign: {
    answers: [
      {
        status: 200,
        body: stormList,
      },
    ],
  },
  getLabRun: {
    parameters: { id: STORM_ID },
    answers: [{ status: 200, body: storm }],
  },
  labNoKeyCheckout: labExample(false),
  labCheckThenInsertCheckout: labExample(true),
  labClaimAfterChargeCheckout: labExample(true),
  labDynamoDbCheckout: labExample(true),
  labRedisCheckout: labExample(true),
  labPowertoolsCheckout: labExample(true),
  receiveStripeWebhook: {
    requestBody: {
      id: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a",
      object: "event",
      type: "payment_intent.succeeded",
      created: 1_796_522_438,
      data: { object: { id: PAYMENT_ID, object: "payment_intent", status: "succeeded" } },
    } satisfies RequestBody<"StripeEvent">,
    answers: [
      {
        status: 200,
        body: {
          received: true,
          eventId: "evt_1QkYVn2bS8dLhN4rT6wXpZ1a",
          outcome: "paid",
        } satisfies ResponseBody<"WebhookReceipt">,
      },
    ],
  },
  health: { answers: [{ status: 200, body: { status: "ok" } satisfies ResponseBody<"Health"> }] },
  ready: {
    answers: [
      {
        status: 200,
        body: {
          status: "ready",
          checkedAt: "2026-12-06T02:00:37.704Z",
          checks: { database: { ok: true, ms: 1 } },
        } satisfies ResponseBody<"Ready">,
      },
    ],
  },
  metrics: {
    answers: [
      {
        status: 200,
        text: [
          "# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds.",
          "# TYPE process_cpu_user_seconds_total counter",
          "process_cpu_user_seconds_total 1.285804",
        ].join("\n"),
      },
    ],
  },
  openApiDocument: {
    answers: [
      {
        status: 200,
        body: { openapi: "3.1.0", info: { title: "OncePay API", version: "1" } },
      },
    ],
  },
};
