import type { OrderFulfilment as Fulfilment } from "@/lib/ledger/order-fulfilment";
import type { OrderView } from "@/lib/orders/order-view";
import { AlertIcon, CheckIcon } from "@/components/ui/icons";
import { formatTime } from "./format";

const SETTLED_BY: Record<string, string> = {
  webhook: "the provider's event",
  recovery: "the recovery worker, asking the provider",
};

/**
 * An order's fulfilment, checked against its payment: a paid order shipped
 * once, any other not at all; and the provider's events about its payment,
 * each with what it did here.
 */
export function OrderFulfilment({
  status,
  fulfilment,
}: {
  status: OrderView["status"];
  fulfilment: Fulfilment;
}) {
  const { shipments, expectedShipments, settledBy, events } = fulfilment;
  const right = shipments === expectedShipments;
  return (
    <div className="mt-2 text-xs text-mocha" data-testid="ledger-fulfilment" data-status={status}>
      <p
        className={`inline-flex items-center gap-1 rounded-full px-2.5 py-0.5 font-semibold ${right ? "bg-oat text-espresso" : "bg-berry-soft text-berry"}`}
        data-shipments={shipments}
        data-right={right}
      >
        {right ? <CheckIcon width={12} height={12} /> : <AlertIcon width={12} height={12} />}
        {fulfilmentText(status, shipments, right)}
      </p>
      {settledBy && <span className="ml-2">Settled by {SETTLED_BY[settledBy] ?? settledBy}.</span>}
      {events.length > 0 && (
        <ul className="mt-1 space-y-0.5" data-testid="ledger-events">
          {events.map((event) => (
            <li key={event.eventId} className="break-all">
              <time dateTime={event.receivedAt}>{formatTime(event.receivedAt)}</time>{" "}
              <code className="font-mono text-espresso">{event.type}</code>: {event.outcome}
              <span className="font-mono"> ({event.eventId})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function fulfilmentText(status: OrderView["status"], shipments: number, right: boolean): string {
  if (!right)
    return status === "paid"
      ? shipments === 0
        ? "Paid, not shipped"
        : `Shipped ${shipments} times for one paid order`
      : `Shipped ${shipments} times, but not paid`;
  if (status === "paid") return "Shipped once";
  if (status === "pending") return "Waiting for the shopper's bank: not shipped";
  return "Not paid: nothing shipped";
}
