import { demoFaultsDisabledResponse, demoFaultsEnabled } from "@/lib/demo/settings";
import { serverEnv } from "@/lib/env";
import type { LabWebhookDesign } from "@/lib/generated/prisma/enums";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { isUuid } from "@/lib/http/uuid";
import { readJsonBody } from "@oncepay/idempotency/request";
import { parseWith } from "@/lib/http/field-errors";
import { admitLabCaller } from "@/lib/api/lab";
import { receiveWebhook } from "@/lib/api/webhooks";
import { receiveWithoutRecord } from "@/lib/lab/no-event-record";
import { allowedStormSizes } from "@/lib/lab/storms";
import {
  createWebhookStorm,
  findWebhookStorm,
  LAB_WEBHOOK_PROVIDER,
  latestWebhookStorms,
  newWebhookStormSchema,
  reportWebhookStorm,
  signedStormRequest,
} from "@/lib/lab/webhook-storms";
import { getServices } from "@/lib/services";
import { receiveEvent } from "@/lib/webhooks/receive";

/**
 * The lab's webhook storms: POST /api/lab/webhook-storms {design, size}
 * makes the storm's pending order and says what to send; the deliveries go
 * to the design's own endpoint (POST /api/lab/webhooks/{event-record,
 * no-event-record}); GET /api/lab/webhook-storms/{id} reports what the
 * handler left, and GET /api/lab/webhook-storms each design's latest.
 * Only with DEMO_FAULTS=on, as the rest of the lab's own designs.
 */
const PRIVATE = { "Cache-Control": "private, no-store" };

/** POST /api/lab/webhook-storms */
export async function startWebhookStorm(request: Request): Promise<Response> {
  const { db, pool } = getServices();
  const caller = await admitWebhookStormCaller(request);
  if (caller instanceof Response) return caller;
  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = parseWith(newWebhookStormSchema, read.json);
  if (!parsed.ok) return requestProblemResponse("invalid-body", parsed.detail, parsed.errors);
  const { design, size } = parsed.value;
  const sizes = allowedStormSizes();
  if (!sizes.includes(size)) {
    const detail = `size must be one of ${sizes.join(", ")} on this server.`;
    return requestProblemResponse("invalid-body", detail, [{ path: "size", message: detail }]);
  }
  const secret = serverEnv().STRIPE_WEBHOOK_SECRET;
  if (!secret) return webhooksNotConfigured();
  const storm = await createWebhookStorm(pool, db, caller.accountId, design, size);
  return jsonResponse(201, await reportWebhookStorm(db, storm, signedStormRequest(storm, secret)), {
    ...PRIVATE,
    Location: `/api/lab/webhook-storms/${storm.id}`,
  });
}

/** GET /api/lab/webhook-storms: each design's latest storm, newest first. */
export async function listWebhookStorms(request: Request): Promise<Response> {
  const { db } = getServices();
  const caller = await admitWebhookStormCaller(request);
  if (caller instanceof Response) return caller;
  const storms = await latestWebhookStorms(db, caller.accountId);
  const data = await Promise.all(storms.map((storm) => reportWebhookStorm(db, storm, null)));
  return jsonResponse(200, { object: "list", data, has_more: false }, PRIVATE);
}

/** GET /api/lab/webhook-storms/{id} */
export async function getWebhookStorm(request: Request, stormId: string): Promise<Response> {
  const { db } = getServices();
  const caller = await admitWebhookStormCaller(request);
  if (caller instanceof Response) return caller;
  const storm = isUuid(stormId) ? await findWebhookStorm(db, caller.accountId, stormId) : undefined;
  if (!storm)
    return problemResponse({
      type: problemType("lab-storm-not-found"),
      title: "Storm not found",
      status: 404,
      detail: `No webhook storm ${stormId} for this account.`,
    });
  return jsonResponse(200, await reportWebhookStorm(db, storm, null), PRIVATE);
}

/**
 * POST /api/lab/webhooks/{design}: the shop's endpoint code, around the
 * design's handler, on the lab's own payments. The event record is
 * OncePay's receiveEvent itself; the other acts on every delivery.
 */
export async function receiveLabWebhook(
  request: Request,
  design: LabWebhookDesign,
): Promise<Response> {
  if (!demoFaultsEnabled())
    return demoFaultsDisabledResponse(
      "This server was started without DEMO_FAULTS=on, so the lab's webhook handlers are switched off.",
    );
  const { pool } = getServices();
  return receiveWebhook(request, (event, fault) =>
    design === "event_record"
      ? receiveEvent(pool, LAB_WEBHOOK_PROVIDER, event, fault)
      : receiveWithoutRecord(pool, LAB_WEBHOOK_PROVIDER, event),
  );
}

/** The lab's caller (lib/api/lab.ts), on a server with demo faults on; else the answer that says why not. */
async function admitWebhookStormCaller(
  request: Request,
): Promise<{ accountId: string } | Response> {
  const caller = await admitLabCaller(request);
  if (caller instanceof Response) return caller;
  if (!demoFaultsEnabled())
    return demoFaultsDisabledResponse(
      "This server was started without DEMO_FAULTS=on, so the lab's webhook storms are switched off.",
    );
  return caller;
}

function webhooksNotConfigured(): Response {
  return problemResponse({
    type: problemType("webhook-not-configured"),
    title: "Webhooks not configured",
    status: 503,
    detail:
      "This server has no STRIPE_WEBHOOK_SECRET, so no delivery could be verified: a storm would only be refused. Set it (npm start makes one).",
  });
}
