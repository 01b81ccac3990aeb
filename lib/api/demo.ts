import { authenticate, authFailureResponse } from "@/lib/auth/accounts";
import {
  demoFaultsDisabledResponse,
  demoFaultsEnabled,
  demoSettingsFor,
  demoSettingsSchema,
  saveDemoSettings,
  type DemoSettingsView,
} from "@/lib/demo/settings";
import { jsonResponse } from "@/lib/http/json";
import { readJsonBody } from "@oncepay/idempotency/request";
import { requestProblemResponse } from "@/lib/http/request-problems";
import { getServices } from "@/lib/services";

export type { DemoSettingsView } from "@/lib/demo/settings";

/** GET /api/demo/settings: this account's demo faults, and whether the server allows any. */
export async function getDemoSettings(request: Request): Promise<Response> {
  const { authenticator, statements } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  const settings = await demoSettingsFor(statements, auth.caller.accountId);
  return jsonResponse(
    200,
    { faultsEnabled: demoFaultsEnabled(), ...settings } satisfies DemoSettingsView,
    { "Cache-Control": "no-store" },
  );
}

/** PUT /api/demo/settings: switch this account's demo faults (only on a server started with DEMO_FAULTS=on). */
export async function putDemoSettings(request: Request): Promise<Response> {
  const { authenticator, db } = getServices();
  const auth = await authenticate(authenticator, request);
  if (!auth.ok) return authFailureResponse(auth.failure);
  if (!demoFaultsEnabled()) {
    return demoFaultsDisabledResponse(
      "This server was started without DEMO_FAULTS=on, so server-side demo faults cannot be switched on.",
    );
  }
  const read = await readJsonBody(request);
  if (!read.ok) return requestProblemResponse(read.reason, read.detail);
  const parsed = demoSettingsSchema.safeParse(read.json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({
      path: issue.path.join("."),
      message: issue.message,
    }));
    return requestProblemResponse(
      "invalid-body",
      errors.map((e) => `${e.path}: ${e.message}`).join("; "),
      errors,
    );
  }
  const saved = await saveDemoSettings(db, auth.caller.accountId, parsed.data);
  return jsonResponse(200, { faultsEnabled: true, ...saved } satisfies DemoSettingsView, {
    "Cache-Control": "no-store",
  });
}
