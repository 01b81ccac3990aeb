/**
 * Stripe's error wire format, `{"error": {...}}`, with the status codes its
 * SDKs map to exception classes: 400/404 invalid_request_error (or
 * idempotency_error), 401 authentication, 402 card_error, 409 a conflicting
 * request, 5xx api_error. stripe-node retries 409 and 5xx on its own, with the
 * same Idempotency-Key, and never retries the others.
 */
export type StripeErrorType =
  "api_error" | "card_error" | "idempotency_error" | "invalid_request_error";

/**
 * Every error `code` the simulator can send. Each is one of Stripe's own
 * (errors.test.ts checks them against the list in Stripe's OpenAPI spec), so
 * a client that branches on codes branches the same way against Stripe.
 * Where Stripe sends no code (an invalid boolean, an unknown currency), the
 * simulator sends none either.
 */
export const SIMULATOR_ERROR_CODES = [
  "amount_too_large",
  "amount_too_small",
  "card_declined",
  "charge_already_refunded",
  "expired_card",
  "idempotency_key_in_use",
  "incorrect_cvc",
  "parameter_invalid_empty",
  "parameter_invalid_integer",
  "parameter_invalid_string_blank",
  "parameter_missing",
  "parameter_unknown",
  "parameters_exclusive",
  "payment_intent_authentication_failure",
  "payment_intent_invalid_parameter",
  "payment_intent_unexpected_state",
  "processing_error",
  "resource_missing",
] as const;
export type StripeErrorCode = (typeof SIMULATOR_ERROR_CODES)[number];

export interface StripeError {
  type: StripeErrorType;
  message: string;
  code?: StripeErrorCode;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: unknown;
  payment_method?: unknown;
}

/** What an endpoint answers: the status and the exact bytes of the body (stored and replayed under a key). */
export interface ApiResponse {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** Stripe answers pretty-printed JSON; any serialisation would do, as long as replays reuse the stored bytes. */
export function stripeJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function jsonResponse(status: number, value: unknown): ApiResponse {
  return { status, body: stripeJson(value) };
}

export function errorResponse(status: number, error: StripeError): ApiResponse {
  return jsonResponse(status, { error });
}

export function docUrl(code: StripeErrorCode): string {
  return `https://stripe.com/docs/error-codes/${code.replaceAll("_", "-")}`;
}

export function invalidRequest(
  message: string,
  details: { param?: string; code?: StripeErrorCode } = {},
  status = 400,
): ApiResponse {
  return errorResponse(status, {
    type: "invalid_request_error",
    message,
    ...(details.code && { code: details.code, doc_url: docUrl(details.code) }),
    ...(details.param && { param: details.param }),
  });
}

/**
 * A parameter the endpoint does not know. Refused rather than ignored, so a
 * client relying on something the simulator does not do finds out at once
 * (a list asked with `starting_after` would otherwise return its first page
 * forever).
 */
export function unknownParameter(param: string, detail?: string): ApiResponse {
  return invalidRequest(`Received unknown parameter: ${param}${detail ? ` (${detail})` : ""}`, {
    param,
    code: "parameter_unknown",
  });
}

export function missingApiKey(): ApiResponse {
  return {
    ...invalidRequest(
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
      {},
      401,
    ),
    headers: { "WWW-Authenticate": 'Bearer realm="Stripe"' },
  };
}

export function invalidApiKey(presented: string): ApiResponse {
  const shown =
    presented.length > 12
      ? `${presented.slice(0, 8)}${"*".repeat(4)}${presented.slice(-4)}`
      : "****";
  const hint =
    presented.startsWith("sk_live_") || presented.startsWith("rk_live_")
      ? " The payment simulator accepts only test-mode keys (sk_test_…, rk_test_…)."
      : "";
  return {
    ...invalidRequest(`Invalid API Key provided: ${shown}.${hint}`, {}, 401),
    headers: { "WWW-Authenticate": 'Bearer realm="Stripe"' },
  };
}

/**
 * An admin call (`/_simulator/*`) without the admin key, or with another
 * one: refused before anything is read or changed. Its own realm, so it is
 * never mistaken for an API key's 401.
 */
export function adminKeyRequired(): ApiResponse {
  return {
    ...invalidRequest(
      "The payment simulator's admin API needs its admin key (SIMULATOR_ADMIN_KEY), sent as 'Authorization: Bearer <admin key>'. API keys (sk_test_…) are not accepted here.",
      {},
      401,
    ),
    headers: { "WWW-Authenticate": 'Bearer realm="payment-simulator-admin"' },
  };
}

/**
 * A request whose Host names another site (host-check.ts): what a page
 * that rebound its own name to this machine sends. 421 Misdirected
 * Request: this server does not answer for that name.
 */
export function misdirectedRequest(host: string | undefined): ApiResponse {
  const named = host === undefined ? "no Host" : `Host ${JSON.stringify(host.slice(0, 255))}`;
  return invalidRequest(
    `Misdirected request (${named}): the payment simulator answers only requests addressed to it as localhost, 127.0.0.1, [::1], the address it listens on, or a name in SIMULATOR_ALLOWED_HOSTS.`,
    {},
    421,
  );
}

/**
 * No object with that id, naming the parameter that carried it, as Stripe
 * does: the path parameter of a retrieve (`intent`, `charge`, `refund`: the
 * names in Stripe's spec), answered 404; a body or query parameter
 * (`payment_method`, a refund's `payment_intent`, a list's
 * `starting_after`), 400.
 */
export function resourceMissing(
  kind: string,
  id: string,
  param: string,
  status: 400 | 404 = 404,
): ApiResponse {
  return invalidRequest(`No such ${kind}: '${id}'`, { code: "resource_missing", param }, status);
}

export function unrecognizedUrl(method: string, path: string): ApiResponse {
  return invalidRequest(
    `Unrecognized request URL (${method}: ${path}). The payment simulator implements POST /v1/payment_intents, GET /v1/payment_intents/:id, GET /v1/payment_intents/search, GET /v1/charges, GET /v1/charges/:id, POST /v1/refunds, GET /v1/refunds and GET /v1/refunds/:id.`,
    {},
    404,
  );
}

/** Same key, different request: the key names the first request for good (stored result or not). */
export function idempotencyKeyReused(key: string): ApiResponse {
  return errorResponse(400, {
    type: "idempotency_error",
    message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

/**
 * Same key while its first request is still running. Nothing is stored for
 * this answer: once the first request finishes, a retry gets its result.
 */
export function idempotencyKeyInUse(key: string): ApiResponse {
  return errorResponse(409, {
    type: "idempotency_error",
    code: "idempotency_key_in_use",
    doc_url: docUrl("idempotency_key_in_use"),
    message: `There is currently another in-progress request using this Idempotency Key (that probably means you submitted twice, and the other request is still going through): '${key}'. Please try again later.`,
  });
}

export function apiError(message: string): ApiResponse {
  return errorResponse(500, { type: "api_error", message });
}

/**
 * The header Stripe sends with a 500 that is stored under its key: retrying
 * with the same key would only replay it, so its SDKs do not.
 */
export const NO_RETRY = { "Stripe-Should-Retry": "false" } as const;

/** The 500 Stripe stores when a request fails while it executes: whether it charged is unknown to the caller. */
export function storedApiError(): ApiResponse {
  return apiError(
    "An unknown error occurred while processing this request. Its outcome is indeterminate; retrying with the same Idempotency-Key returns this same error. Look the PaymentIntent up to learn what happened.",
  );
}
