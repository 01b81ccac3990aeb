import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import { demoFaultsDisabledResponse, demoFaultsEnabled } from "@/lib/demo/settings";
import { jsonResponse } from "@/lib/http/json";
import { problemResponse, problemType } from "@/lib/http/problem";
import { readJsonBody } from "@oncepay/idempotency/request";
import { rateLimitedResponse, requestProblemResponse } from "@/lib/http/request-problems";
import { isUuid } from "@/lib/http/uuid";
import { refusedByLabLimit } from "@/lib/lab/admission";
import {
  allowedStormSizes,
  createStorm,
  findStorm,
  latestRunsOfEachDesign,
  latestStorms,
  newLabRunSchema,
  reportStorm,
  unfiredStormReport,
} from "@/lib/lab/storms";
import { isLabOnly, LAB_STRATEGY_INFO } from "@/lib/lab/strategies";
import {
  ProviderReadsLimited,
  providerReadsLimitedDetail,
  type ProviderReads,
} from "@/lib/ledger/provider-reads";
import { mapWithLimit } from "@/lib/map-with-limit";
import { getServices } from "@/lib/services";

/**
 * The strategy lab's storms: POST /api/lab/storms starts one (the server
 * mints its intent and says what to send), GET /api/lab/storms/{id} reports
 * what it left behind, GET /api/lab/storms lists the latest, and
 * GET /api/lab/latest-runs each design's latest storm and crash run. The
 * requests themselves go to the strategies' own endpoints.
 */

const PRIVATE = { "Cache-Control": "private, no-store" };
// The lab page shows a row per strategy and a short history.
const LISTED_STORMS = 20;
const REPORTS_AT_ONCE = 4;

/** POST /api/lab/storms {strategy, size} (a storm) or {strategy, kind: "crash"} (the crash scenario) */
export async function startStorm(request: Request): Promise<Response> {
  const { db } = getServices();
  const caller = await admitLabCaller(request);
  if (caller instanceof Response) return caller;
  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = newLabRunSchema.safeParse(read.json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({
      path: issue.path.join("."),
      message: issue.message,
    }));
    return requestProblemResponse(
      "invalid-body",
      errors.map((e) => `${e.path || "body"}: ${e.message}`).join("; "),
      errors,
    );
  }
  const { strategy, kind, size } = parsed.data;
  const sizes = allowedStormSizes();
  if (kind === "storm" && !sizes.includes(size!)) {
    const detail = `size must be one of ${sizes.join(", ")} on this server.`;
    return requestProblemResponse("invalid-body", detail, [{ path: "size", message: detail }]);
  }
  if (isLabOnly(strategy) && !demoFaultsEnabled()) {
    return demoFaultsDisabledResponse(
      `This server was started without DEMO_FAULTS=on, so the lab's own strategies are switched off; "${LAB_STRATEGY_INFO.atomic_claim.name}" still runs.`,
    );
  }
  if (kind === "crash" && !demoFaultsEnabled()) {
    return demoFaultsDisabledResponse(
      "This server was started without DEMO_FAULTS=on, so nothing can be made to crash: the crash scenario is switched off.",
    );
  }
  const storm = await createStorm(
    db,
    caller.accountId,
    strategy,
    kind === "storm" ? { kind, size: size! } : { kind },
  );
  return jsonResponse(201, unfiredStormReport(storm), {
    ...PRIVATE,
    Location: `/api/lab/storms/${storm.id}`,
  });
}

/** GET /api/lab/storms: the latest storms, newest first, each with its report. */
export async function listStorms(request: Request): Promise<Response> {
  const { db, providerReadsFor } = getServices();
  const caller = await admitLabCaller(request);
  if (caller instanceof Response) return caller;
  const { accountId } = caller;
  const storms = await latestStorms(db, accountId, LISTED_STORMS + 1);
  const shown = storms.slice(0, LISTED_STORMS);
  // Each report asks the provider once: all of them, or none.
  const reads = providerReadsFor(accountId);
  const limited = await reserveReads(reads, shown.length);
  if (limited) return limited;
  // A few at a time, as the ledger does.
  const data = await mapWithLimit(shown, REPORTS_AT_ONCE, (storm) =>
    reportStorm(db, reads.records, storm),
  );
  return jsonResponse(
    200,
    { object: "list", data, has_more: storms.length > LISTED_STORMS },
    PRIVATE,
  );
}

/** GET /api/lab/latest-runs: each design's latest storm and latest crash run, newest first, however old. */
export async function listLatestRunsOfEachDesign(request: Request): Promise<Response> {
  const { db, providerReadsFor } = getServices();
  const caller = await admitLabCaller(request);
  if (caller instanceof Response) return caller;
  const { accountId } = caller;
  const runs = await latestRunsOfEachDesign(db, accountId);
  const reads = providerReadsFor(accountId);
  const limited = await reserveReads(reads, runs.length);
  if (limited) return limited;
  const data = await mapWithLimit(runs, REPORTS_AT_ONCE, (run) =>
    reportStorm(db, reads.records, run),
  );
  // At most one run per design and kind: the whole answer, never a page of it.
  return jsonResponse(200, { object: "list", data, has_more: false }, PRIVATE);
}

/** GET /api/lab/storms/{id} */
export async function getStorm(request: Request, stormId: string): Promise<Response> {
  const { db, providerReadsFor } = getServices();
  const caller = await admitLabCaller(request);
  if (caller instanceof Response) return caller;
  const { accountId } = caller;
  const storm = isUuid(stormId) ? await findStorm(db, accountId, stormId) : undefined;
  if (!storm) {
    return problemResponse({
      type: problemType("lab-storm-not-found"),
      title: "Storm not found",
      status: 404,
      detail: `No storm ${stormId} for this account.`,
    });
  }
  const reads = providerReadsFor(accountId);
  const limited = await reserveReads(reads, 1);
  if (limited) return limited;
  return jsonResponse(200, await reportStorm(db, reads.records, storm), PRIVATE);
}

/** The caller, signed in and within the lab's rate limit; else the 401 or 429 that says why not. */
export async function admitLabCaller(request: Request): Promise<{ accountId: string } | Response> {
  const { authenticator, labLimit } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const { accountId } = auth.caller;
  return (await refusedByLabLimit(labLimit, accountId)) ?? { accountId };
}

/** A 429 when the account's provider reads cannot cover `lookups` more; nothing was asked. */
async function reserveReads(reads: ProviderReads, lookups: number): Promise<Response | undefined> {
  try {
    await reads.reserve(lookups);
    return undefined;
  } catch (error) {
    if (!(error instanceof ProviderReadsLimited)) throw error;
    return rateLimitedResponse(
      providerReadsLimitedDetail(error.retryAfterSeconds),
      error.retryAfterSeconds,
    );
  }
}
