import { problemResponse, problemType } from "@/lib/http/problem";

/** No such order for this account: another account's order looks exactly the same. */
export function orderNotFoundResponse(orderId: string, headers?: Record<string, string>): Response {
  return problemResponse(
    {
      type: problemType("order-not-found"),
      title: "Order not found",
      status: 404,
      detail: `No order ${orderId} for this account.`,
    },
    headers,
  );
}
