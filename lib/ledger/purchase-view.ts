import { z } from "zod";
import type { CountedPurchase } from "@/lib/ledger/purchase-count";
import { orderView, orderViewSchema } from "@/lib/orders/order-view";

/**
 * A purchase as GET /api/purchases/{cartId} shows it: the orders written for
 * one cart and what the payment provider charged for them, with the verdict
 * the two add up to (lib/ledger/purchase.ts). The OpenAPI document is made
 * from this schema, and the type is read from it.
 */
export const purchaseViewSchema = z.object({
  object: z.literal("purchase"),
  cartId: z.string(),
  orders: z
    .array(orderViewSchema)
    .describe("Every order written for this cart, newest first: one when the purchase went right."),
  charges: z
    .discriminatedUnion("counted", [
      z.object({
        counted: z.literal(true),
        charges: z.number().int().describe("Successful charges at the payment provider."),
        amountCharged: z.number().int().describe("Their sum, in the currency's minor unit."),
        currency: z.string(),
      }),
      z.object({ counted: z.literal(false), detail: z.string() }),
    ])
    .describe("Counted from the payment provider's own records, not from ours."),
  verdict: z
    .enum(["charged-once", "charged-more-than-once", "not-charged", "uncounted"])
    .describe("What the orders and the charges add up to: only `charged-once` is right."),
});
export type PurchaseView = z.infer<typeof purchaseViewSchema>;

/** Said when the purchase's payments predate provider keys, so the provider cannot be asked about them. */
const UNTRACKED_DETAIL =
  "These orders were paid before payments kept their provider key, so the provider cannot be asked about them.";

/** The view of a counted purchase; a `limited` count is the caller's to answer (a 429), never shown as half an answer. */
export function purchaseView({ summary, orders }: CountedPurchase): PurchaseView {
  const { charges } = summary;
  return {
    object: "purchase",
    cartId: summary.cartId,
    orders: orders.map(orderView),
    charges:
      charges.kind === "counted"
        ? {
            counted: true,
            charges: charges.charges,
            amountCharged: charges.amountCharged,
            currency: charges.currency,
          }
        : {
            counted: false,
            detail:
              charges.kind === "unavailable"
                ? charges.detail
                : charges.kind === "untracked"
                  ? UNTRACKED_DETAIL
                  : "Not counted.",
          },
    verdict: summary.verdict,
  };
}
