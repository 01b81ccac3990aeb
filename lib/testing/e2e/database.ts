import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { BrowserContext } from "@playwright/test";
import pg from "pg";
import { E2E_DATABASE_URL_FILE } from "@/lib/testing/e2e/paths";
import { lazyPool, rowsIn } from "@/lib/testing/rows";

/**
 * The Playwright wiring of lib/testing/rows.ts. The e2e specs check the
 * database, not only the page: "one order" means one row in `orders` for the
 * browser's account. The URL comes from the file the e2e server's launcher
 * writes, since only it knows which database it ended up using.
 */
const e2ePool = lazyPool(
  () =>
    new pg.Pool({ connectionString: readFileSync(E2E_DATABASE_URL_FILE, "utf8").trim(), max: 2 }),
);
const rows = rowsIn(e2ePool.db);

export const closeDatabase = e2ePool.close;
export const {
  ordersOf,
  paymentsOf,
  fulfilmentOf,
  deliveriesOf,
  labWebhookStormOf,
  idempotencyKeysOf,
  demoFaultsOf,
  keyRow,
  refundsOfOrder,
  providerRefundsOfOrder,
  keyRequestsOf,
  providerIntents,
  ordersForCart,
  labStorm,
  labRunCounts,
} = rows;

/** The account behind this browser's session cookie (created on its first API call). */
export async function accountIdOf(context: BrowserContext): Promise<string> {
  // The shop's own cookie is the one for the whole site: a neighbour may have tossed others in.
  const session = (await context.cookies()).find(
    (cookie) => cookie.name === "oncepay_session" && cookie.path === "/",
  );
  if (!session) throw new Error("The browser has no session cookie");
  const accountId = await rows.accountIdByTokenHash(
    createHash("sha256").update(session.value).digest("hex"),
  );
  if (!accountId) throw new Error("No account for this browser's session yet");
  return accountId;
}

/** One key's row as the server left it: in flight (`response_status` null) until its attempt completes. */
export async function keyStateOf(
  accountId: string,
  key: string,
): Promise<{ state: string; response_status: number | null } | null> {
  const row = await rows.keyRow(accountId, key);
  return row ? { state: row.state, response_status: row.response_status } : null;
}
