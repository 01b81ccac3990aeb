import { problemType } from "@/lib/http/problem-type";

/**
 * What each problem `type` the API answers with means, for the page that
 * `type` names (`/problems/<slug>`): what happened, and what the client
 * should do. The three answers a client of a keyed endpoint needs tell
 * which of them it is: send the same request again under the same key,
 * make a new key for what is a new request, or fix the request (whose key
 * was never used, so it may go with the fixed one). A test holds this list
 * to the OpenAPI document's: every `type` an answer may carry is here, and
 * nothing else is.
 */
export type ProblemAction = "retry" | "new-key" | "fix";

export interface ProblemExplanation {
  status: number;
  /** The same as the answers' `title`. */
  title: string;
  happened: string;
  action: ProblemAction;
  /** What to do, in the action's own terms. */
  todo: string;
}

export const ACTION_LABELS: Record<ProblemAction, string> = {
  retry: "Retry with the same key",
  "new-key": "Use a new key",
  fix: "Fix the request",
};

const RETRY_SAME = "Send the same request again, with the same Idempotency-Key and the same body";
const UNUSED_KEY =
  "Nothing was written under its Idempotency-Key, so the key can go with the fixed request.";

export const PROBLEM_EXPLANATIONS: Record<string, ProblemExplanation> = {
  "idempotency-key-missing": {
    status: 400,
    title: "Idempotency-Key header missing",
    happened: "The request wants an Idempotency-Key header and came without one. Nothing was done.",
    action: "fix",
    todo: "Make one key (a UUID) per operation before its first attempt, and send it with every attempt of that operation, retries included.",
  },
  "idempotency-key-invalid": {
    status: 400,
    title: "Idempotency-Key header invalid",
    happened:
      "The Idempotency-Key is not 1 to 255 printable ASCII characters (a structured-field string, quoted or not). Nothing was done.",
    action: "fix",
    todo: "Send a key the server can read: a UUID is the usual choice.",
  },
  "idempotency-key-repeated": {
    status: 400,
    title: "More than one Idempotency-Key header",
    happened:
      "The request carried the Idempotency-Key field more than once, so it names no one operation. Nothing was done.",
    action: "fix",
    todo: "Send exactly one Idempotency-Key field.",
  },
  "idempotency-key-reused": {
    status: 422,
    title: "Idempotency key reused with a different request",
    happened:
      "The key was first used for another request: another body, method or path. That first request's result stays with the key; this one was not run.",
    action: "new-key",
    todo: "A new request needs a new key. If this was meant as a retry, send the very same body to the same path: the key then gives the first request's answer.",
  },
  "idempotency-key-expired": {
    status: 422,
    title: "Idempotency key reused after it expired",
    happened:
      "The key was used for the same cart longer ago than keys are kept, so the server had forgotten it; the payment provider still remembers that first charge, and running the checkout again would record a second order for one charge. Nothing was charged.",
    action: "new-key",
    todo: "A new purchase needs a new key. What the first one bought is in the account's orders.",
  },
  "request-in-progress": {
    status: 409,
    title: "A request with this key is still in progress",
    happened:
      "Another attempt with this key has not finished yet. Nothing was done by this one, and nothing will be done twice.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds: once the first attempt finishes, the retry gets its answer. An attempt that died is taken over when its lease runs out (Idempotency-Key-Policy says how long).`,
  },
  "invalid-body": {
    status: 400,
    title: "Invalid request body",
    happened:
      "The body is JSON, but not what this endpoint takes: `errors` lists each field at fault and why. Nothing was done.",
    action: "fix",
    todo: `Correct the fields named in errors. ${UNUSED_KEY}`,
  },
  "malformed-json": {
    status: 400,
    title: "Malformed JSON",
    happened: "The body is not valid JSON (or not valid UTF-8). Nothing was done.",
    action: "fix",
    todo: `Send the body as JSON. ${UNUSED_KEY}`,
  },
  "unacceptable-json": {
    status: 400,
    title: "JSON the server does not accept",
    happened:
      "The body is valid JSON the server cannot keep or fingerprint faithfully: a NUL character, a lone UTF-16 surrogate, a number too large to represent, or nesting too deep. Nothing was done.",
    action: "fix",
    todo: `Remove what the detail names. ${UNUSED_KEY}`,
  },
  "body-incomplete": {
    status: 400,
    title: "Request body incomplete",
    happened: "The connection ended before the body did. Nothing was done.",
    action: "fix",
    todo: `Send the request again, whole. ${UNUSED_KEY}`,
  },
  "body-too-large": {
    status: 413,
    title: "Request body too large",
    happened: "The body is larger than the server reads (16 KiB). Nothing was done.",
    action: "fix",
    todo: `Send a smaller body. ${UNUSED_KEY}`,
  },
  "unsupported-media-type": {
    status: 415,
    title: "Unsupported media type",
    happened:
      "The body is not declared as JSON, or it is compressed (Content-Encoding). Nothing was done.",
    action: "fix",
    todo: "Send the body uncompressed, with Content-Type: application/json.",
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    happened:
      "The request carried no credentials the server knows: no bearer token, or one it never issued, and no session cookie it signed. Nothing was done.",
    action: "fix",
    todo: "Send Authorization: Bearer with a token from POST /api/accounts, or use the shop's pages, which carry its session cookie.",
  },
  "several-session-cookies": {
    status: 401,
    title: "More than one session cookie",
    happened:
      "The browser sent more than one session cookie (a neighbour on the same host can plant one), so the server trusted neither. The answer expires every one but the shop's own.",
    action: "retry",
    todo: `${RETRY_SAME}: it now carries the shop's cookie alone. Nothing was claimed under the key.`,
  },
  "cross-site-request": {
    status: 403,
    title: "Cross-site request refused",
    happened:
      "A write authenticated by the session cookie came from another site's page. Nothing was done.",
    action: "fix",
    todo: "Send writes from the shop's own pages, or from a program with a bearer token.",
  },
  "rate-limited": {
    status: 429,
    title: "Too many requests",
    happened:
      "The account (or, for new accounts, the address) sent more requests of this kind than the window allows. Nothing was done, and no key was claimed.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds.`,
  },
  "payment-declined": {
    status: 402,
    title: "Payment declined",
    happened:
      "The card was declined, and nothing was charged. The decline is the key's result: the same key answers it again.",
    action: "new-key",
    todo: "Pay with another card: that is a new checkout, with a new key.",
  },
  "webhook-signature-invalid": {
    status: 400,
    title: "Webhook signature invalid",
    happened:
      "The event's Stripe-Signature was missing, did not verify with this endpoint's signing secret over the exact body sent, or was more than five minutes old. Nothing was done.",
    action: "fix",
    todo: "Sign each delivery with the endpoint's whsec_ secret, at the time it is sent, over the body as sent. A forged or replayed event cannot be fixed: it is refused for good.",
  },
  "webhook-not-configured": {
    status: 503,
    title: "Webhooks not configured",
    happened:
      "The server has no STRIPE_WEBHOOK_SECRET, so it can verify no event. Nothing was done.",
    action: "retry",
    todo: "Set STRIPE_WEBHOOK_SECRET (npm start makes one); the provider's retries of the same event then get through.",
  },
  "payment-not-recorded-yet": {
    status: 503,
    title: "Payment not recorded yet",
    happened:
      "The event is about one of the shop's payments whose checkout has not recorded it yet (its commit is a moment away). Nothing was done, and the event's id was not kept.",
    action: "retry",
    todo: "Deliver the same event again after Retry-After seconds, as the provider does: it is then acted on, once.",
  },
  "dependency-unavailable": {
    status: 503,
    title: "A service this request needs did not answer",
    happened:
      "The payment provider (or the lab's key store) did not answer, or answered with its own failure. Whether it acted is not known yet; the key remembers where the request stopped.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds: the retry asks the provider under the same key of its own, and never charges twice.`,
  },
  "dependency-rejected": {
    status: 502,
    title: "A service this request needs refused it",
    happened:
      "The payment provider refused the request itself (credentials or a parameter it does not accept), so nothing was charged. This is a fault on the server's side, not in the request.",
    action: "retry",
    todo: `${RETRY_SAME} once the server's operators have fixed it.`,
  },
  "database-unavailable": {
    status: 503,
    title: "Service temporarily unavailable",
    happened:
      "The database could not be reached. Nothing happened twice: a request stopped here is either not started or kept where it stopped.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds.`,
  },
  "internal-error": {
    status: 500,
    title: "Internal server error",
    happened:
      "Something failed on the server's side. A 500 is never stored with a key: the request is either released or kept where it stopped, to be finished.",
    action: "retry",
    todo: `${RETRY_SAME}: it will not happen twice.`,
  },
  "not-ready": {
    status: 503,
    title: "Not ready to serve",
    happened:
      "This instance is not ready: it is starting, or cannot reach a service it needs. A balancer sends traffic elsewhere while it answers this.",
    action: "retry",
    todo: "Ask again after Retry-After seconds.",
  },
  "bad-gateway": {
    status: 502,
    title: "Bad gateway",
    happened:
      "The balancer in front of the instances got no answer: the instance serving the request stopped before it answered.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds: another instance resumes the request where it stopped.`,
  },
  "gateway-timeout": {
    status: 504,
    title: "Gateway timeout",
    happened: "The balancer in front of the instances waited too long for the instance's answer.",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds: the key gives the first attempt's answer, or resumes it.`,
  },
  "service-unavailable": {
    status: 503,
    title: "Service temporarily unavailable",
    happened:
      "The balancer in front of the instances found none ready to serve (none can reach its database).",
    action: "retry",
    todo: `${RETRY_SAME}, after Retry-After seconds.`,
  },
  "not-found": {
    status: 404,
    title: "Not found",
    happened:
      "There is nothing at this path through the balancer (metrics are read from each instance).",
    action: "fix",
    todo: "Ask each instance for its metrics directly.",
  },
  "order-not-found": {
    status: 404,
    title: "Order not found",
    happened:
      "This account has no order by that id (another account's order looks the same). Nothing was done.",
    action: "fix",
    todo: "Use the id of one of this account's orders (GET /api/orders lists them).",
  },
  "purchase-not-found": {
    status: 404,
    title: "Purchase not found",
    happened: "This account has no purchase by that cart id.",
    action: "fix",
    todo: "Use the cartId of one of this account's checkouts.",
  },
  "idempotency-key-not-found": {
    status: 404,
    title: "Idempotency key not found",
    happened:
      "This account has no key by that name (another account's key looks the same), or it was forgotten after its retention.",
    action: "fix",
    todo: "Ask for a key this account sent, within its lifetime (Idempotency-Key-Expires on its answers).",
  },
  "lab-storm-not-found": {
    status: 404,
    title: "Storm not found",
    happened: "The strategy lab has no storm by that id for this account.",
    action: "fix",
    todo: "Use the id a storm's start answered with.",
  },
  "refund-exceeds-balance": {
    status: 422,
    title: "Refund larger than what is left to refund",
    happened:
      "The refund asks for more than is left of the order's charge, counting refunds still in flight. Nothing was refunded, and this refusal is the key's result.",
    action: "new-key",
    todo: "Ask for at most what is left, under a new key.",
  },
  "refund-refused": {
    status: 422,
    title: "The payment provider refused the refund",
    happened:
      "The payment provider refused the refund. Nothing was refunded, and this refusal is the key's result.",
    action: "new-key",
    todo: "Look at the order's charge at the provider; a refund tried again is a new request, under a new key.",
  },
  "invalid-query": {
    status: 400,
    title: "Invalid query parameters",
    happened: "A query parameter is unknown, repeated or out of range: `errors` names each.",
    action: "fix",
    todo: "Send only the parameters the endpoint lists, each once, within range.",
  },
  "demo-faults-disabled": {
    status: 403,
    title: "Demo faults are disabled",
    happened:
      "This server runs without DEMO_FAULTS=on, so faults, the demo settings and the strategy lab are switched off.",
    action: "fix",
    todo: "Use them on a server started with DEMO_FAULTS=on (the embedded database's default): they are for tests and demos.",
  },
  "redelivery-unavailable": {
    status: 409,
    title: "Events cannot be delivered again from here",
    happened:
      "The order has no payment yet, or this server talks to a provider it cannot ask to deliver events again (only the local payment simulator, with its admin key, can). Nothing was sent.",
    action: "fix",
    todo: "Run the demo on `npm start` with demo faults on, for an order with a payment; with Stripe itself, resend an event from its Dashboard or CLI.",
  },
  "method-not-allowed": {
    status: 405,
    title: "Method not allowed",
    happened: "The path does not answer this method.",
    action: "fix",
    todo: "Use one of the methods the Allow header lists.",
  },
  "malformed-path": {
    status: 400,
    title: "Malformed path",
    happened:
      "The path has a dot segment (. or .., encoded or not), a percent-encoding that is not UTF-8, or names no path at all.",
    action: "fix",
    todo: "Send the path resolved and percent-encoded in UTF-8, as browsers do.",
  },
  "malformed-request": {
    status: 400,
    title: "Malformed request",
    happened:
      "The bytes are not valid HTTP/1.1: the framing (Content-Length, Transfer-Encoding), the method or a header field. The connection closes after this answer.",
    action: "fix",
    todo: "Send a well-formed request on a new connection.",
  },
  "header-fields-too-large": {
    status: 431,
    title: "Request header fields too large",
    happened: "The request's header fields are larger than the server reads.",
    action: "fix",
    todo: "Send fewer or smaller header fields (often: fewer cookies).",
  },
  "misdirected-request": {
    status: 421,
    title: "Misdirected request",
    happened: "The request target names another host or scheme than this server's.",
    action: "fix",
    todo: "Send a path, or a URL of this host.",
  },
  "expectation-failed": {
    status: 417,
    title: "Expectation failed",
    happened:
      "The request carried an Expect other than 100-continue, which is the only one the server meets.",
    action: "fix",
    todo: "Send the request without Expect.",
  },
};

export interface ProblemPageView extends ProblemExplanation {
  slug: string;
  type: string;
  actionLabel: string;
}

export function problemPageView(slug: string): ProblemPageView | undefined {
  if (!Object.hasOwn(PROBLEM_EXPLANATIONS, slug)) return undefined;
  const explanation = PROBLEM_EXPLANATIONS[slug]!;
  return {
    slug,
    type: problemType(slug),
    actionLabel: ACTION_LABELS[explanation.action],
    ...explanation,
  };
}

/** Every problem, grouped by what the client should do, each group by status. */
export function problemIndexView(): {
  action: ProblemAction;
  label: string;
  problems: ProblemPageView[];
}[] {
  const all = Object.keys(PROBLEM_EXPLANATIONS).map((slug) => problemPageView(slug)!);
  return (Object.keys(ACTION_LABELS) as ProblemAction[]).map((action) => ({
    action,
    label: ACTION_LABELS[action],
    problems: all
      .filter((problem) => problem.action === action)
      .sort((a, b) => a.status - b.status || a.slug.localeCompare(b.slug)),
  }));
}
