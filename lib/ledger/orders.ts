import type { Database } from "@/lib/db/client";
import type { ListParams } from "@/lib/http/list-params";
import type { OrderWithDetails } from "@/lib/orders/order-view";

/**
 * One page of an account's orders, newest first, by keyset on
 * (created_at, id): a page boundary stays put while new orders arrive, and
 * a page costs one index range scan however deep it is (an OFFSET would
 * read and skip every order before it).
 */
export type OrdersPage =
  { kind: "page"; orders: OrderWithDetails[]; hasMore: boolean } | { kind: "unknown-cursor" };

export async function ordersPage(
  db: Database,
  accountId: string,
  { limit, startingAfter }: ListParams,
): Promise<OrdersPage> {
  let after: { createdAt: Date; id: string } | null = null;
  if (startingAfter !== undefined) {
    // Another account's order is as unknown as one that never was.
    after = await db.order.findFirst({
      where: { id: startingAfter, accountId },
      select: { createdAt: true, id: true },
    });
    if (!after) return { kind: "unknown-cursor" };
  }
  const rows = await db.order.findMany({
    where: {
      accountId,
      // The lab's webhook storms write orders of their own, paid at no
      // provider: the lab page reports them, they are no purchases.
      source: { not: "lab_webhooks" },
      ...(after && {
        OR: [
          { createdAt: { lt: after.createdAt } },
          { createdAt: after.createdAt, id: { lt: after.id } },
        ],
      }),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
    include: { items: true, payment: true },
  });
  return { kind: "page", orders: rows.slice(0, limit), hasMore: rows.length > limit };
}
