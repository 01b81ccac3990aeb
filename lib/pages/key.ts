import { inspectKey, type KeyInspection } from "@/lib/ledger/key-inspection";
import { pageAccount } from "@/lib/pages/session";
import { getServices } from "@/lib/services";

/** What /keys/{key} shows: the key, or nothing (another browser's key is as absent as one that never was). */
export async function keyPageView(key: string): Promise<KeyInspection | undefined> {
  const accountId = await pageAccount();
  if (!accountId) return undefined;
  const { db, providerReadsFor } = getServices();
  return inspectKey(db, providerReadsFor(accountId), accountId, key);
}
