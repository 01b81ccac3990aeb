import { readAtMost } from "@oncepay/idempotency/request";
import { serverEnv } from "@/lib/env";
import { injectFault, requestedFault, type FaultName } from "@/lib/faults";
import { RETRY_AFTER_HEADER } from "@/lib/http/headers";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { log } from "@/lib/log";
import { addToContext } from "@/lib/observability/request-context";
import { getServices } from "@/lib/services";
import { logDelivery } from "@/lib/webhooks/delivery-log";
import type { WebhookReceipt } from "@/lib/webhooks/receipt";
import { PaymentNotRecordedYet, receiveEvent } from "@/lib/webhooks/receive";
import {
  EventRefused,
  SIGNATURE_TOLERANCE_SECONDS,
  verifiedStripeEvent,
  type ProviderEvent,
} from "@/lib/webhooks/stripe-event";

/**
 * POST /api/webhooks/stripe: the provider's events, each acted on once.
 * The body is read as bytes, at most MAX_EVENT_BYTES, and verified as sent
 * (a signature is over the exact bytes: nothing parses it first); only a
 * verified event reaches the database. Every refusal changes nothing and
 * stores nothing. A 2xx tells the provider to stop delivering this copy, so
 * it is given only once the event's effect, or its being a duplicate, is
 * committed.
 */
// Stripe's events are a few kilobytes; a Charge with its refunds listed is the largest here.
export const MAX_EVENT_BYTES = 256 * 1024;

// How soon the provider should try again when the payment's own commit is a moment away.
const NOT_RECORDED_RETRY_AFTER_SECONDS = 1;
const NOT_CONFIGURED_RETRY_AFTER_SECONDS = 60;

export async function receiveStripeWebhook(request: Request): Promise<Response> {
  const { pool, paymentProvider } = getServices();
  return receiveWebhook(request, (event, fault) =>
    receiveEvent(pool, paymentProvider.name, event, fault),
  );
}

/** What acts on a verified event: the shop's receiveEvent, or (in the lab) a handler storming beside it. */
export type ActOnEvent = (
  event: ProviderEvent,
  fault: FaultName | undefined,
) => Promise<WebhookReceipt["outcome"]>;

/** The endpoint's work around `act`: the body read, the signature checked, the answer and its refusals. */
export async function receiveWebhook(request: Request, act: ActOnEvent): Promise<Response> {
  const secret = serverEnv().STRIPE_WEBHOOK_SECRET;
  if (!secret) return notConfigured();
  const body = await readEventBody(request);
  if (body instanceof Response) return body;

  let event: ProviderEvent;
  try {
    event = verifiedStripeEvent(body, request.headers.get("stripe-signature"), secret);
  } catch (error) {
    if (!(error instanceof EventRefused)) throw error;
    return refused(error);
  }
  addToContext({ eventId: event.id });
  const { pool } = getServices();
  const fault = requestedFault(request);
  try {
    const outcome = await act(event, fault);
    // Committed, and no 2xx sent yet: the provider will deliver it again.
    injectFault(fault, "after-commit");
    log.info("webhook.received", { eventId: event.id, type: event.type, outcome });
    const receipt: WebhookReceipt = { received: true, eventId: event.id, outcome };
    return jsonResponse(200, receipt);
  } catch (error) {
    if (!(error instanceof PaymentNotRecordedYet)) throw error;
    // Its transaction is rolled back; the refusal is still a delivery the log shows.
    await logDelivery(pool, event, "not_recorded_yet");
    return notRecordedYet(event, error);
  }
}

/** The body's exact bytes, or the answer that refuses it: not JSON, cut off, or too large. */
async function readEventBody(request: Request): Promise<Uint8Array | Response> {
  const mediaType = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json")
    return requestProblemResponse(
      "unsupported-media-type",
      "An event comes as JSON (Content-Type: application/json), as the provider sends it.",
    );
  const declared = Number(request.headers.get("content-length"));
  const body =
    Number.isFinite(declared) && declared > MAX_EVENT_BYTES
      ? null
      : await readAtMost(request, MAX_EVENT_BYTES).catch(() => undefined);
  if (body === undefined)
    return requestProblemResponse("body-incomplete", "The event's body broke off before it ended.");
  if (body === null)
    return requestProblemResponse(
      "body-too-large",
      `An event's body is at most ${MAX_EVENT_BYTES} bytes. Nothing was done.`,
    );
  return body;
}

function notConfigured(): Response {
  return problemResponse(
    {
      type: problemType("webhook-not-configured"),
      title: "Webhooks not configured",
      status: 503,
      detail:
        "This server has no STRIPE_WEBHOOK_SECRET, so it can verify no event. Nothing was done; set it (npm start makes one) and the provider's retries get through.",
    },
    { [RETRY_AFTER_HEADER]: String(NOT_CONFIGURED_RETRY_AFTER_SECONDS) },
  );
}

function refused(error: EventRefused): Response {
  log.warn("webhook.refused", { reason: error.reason, detail: error.message });
  if (error.reason === "malformed")
    return requestProblemResponse("malformed-json", `${error.message} Nothing was done.`);
  return problemResponse({
    type: problemType("webhook-signature-invalid"),
    title: "Webhook signature invalid",
    status: 400,
    detail: `${error.message} Nothing was done: only an event signed with this endpoint's secret, within ${SIGNATURE_TOLERANCE_SECONDS} s of its timestamp, is acted on.`,
  });
}

function notRecordedYet(event: ProviderEvent, error: PaymentNotRecordedYet): Response {
  log.info("webhook.payment_not_recorded_yet", {
    eventId: event.id,
    paymentIntentId: error.paymentIntentId,
  });
  return problemResponse(
    {
      type: problemType("payment-not-recorded-yet"),
      title: "Payment not recorded yet",
      status: 503,
      detail: `Payment ${error.paymentIntentId} is the shop's, and its checkout has not recorded it yet. Nothing was done; deliver the event again and it will be acted on.`,
    },
    { [RETRY_AFTER_HEADER]: String(NOT_RECORDED_RETRY_AFTER_SECONDS) },
  );
}
