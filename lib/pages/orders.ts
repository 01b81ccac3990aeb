import { describeQueryErrors, parseListParams } from "@/lib/http/list-params";
import { ledgerPage, type LedgerPurchase } from "@/lib/ledger/ledger-page";
import { pageAccount } from "@/lib/pages/session";
import { getServices } from "@/lib/services";

/** What /orders shows: a page of the ledger, or why there is none. */
export type OrdersPageView =
  | { kind: "page"; purchases: LedgerPurchase[]; hasMore: boolean; limit: number; first: boolean }
  | { kind: "no-account" }
  | { kind: "bad-query"; detail: string };

// The page shows fewer than the API's default, each with a provider lookup.
const PAGE_LIMITS = { defaultLimit: 20, maxLimit: 100 };

export async function ordersPageView(
  searchParams: Record<string, string | string[] | undefined>,
): Promise<OrdersPageView> {
  const accountId = await pageAccount();
  if (!accountId) return { kind: "no-account" };
  const query = parseListParams(
    new URL(`http://page/orders?${toQuery(searchParams)}`),
    PAGE_LIMITS,
  );
  if (!query.ok) return { kind: "bad-query", detail: describeQueryErrors(query.errors) };

  const { db, providerReadsFor } = getServices();
  const page = await ledgerPage(db, providerReadsFor(accountId), accountId, query.params);
  if (page.kind === "unknown-cursor")
    return {
      kind: "bad-query",
      detail: "That page starts after an order this browser does not have.",
    };
  return {
    kind: "page",
    purchases: page.purchases,
    hasMore: page.hasMore,
    limit: query.params.limit,
    first: query.params.startingAfter === undefined,
  };
}

function toQuery(searchParams: Record<string, string | string[] | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(searchParams)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
      query.append(name, one);
  }
  return query.toString();
}
