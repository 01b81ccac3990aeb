"use client";

import { useEffect, useRef, useState } from "react";
import {
  LOOK_INTERVAL_MS,
  describeDelivery,
  fetchOrderWebhooks,
  keepWatching,
  offsetSeconds,
  redeliverWebhooks,
  summarizeDeliveries,
  type OrderWebhooks,
} from "@/lib/client/order-webhooks";
import { CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";

interface ProviderEventsProps {
  orderId: string;
  /** The "Duplicate webhooks" demo: once the order is settled, have the provider deliver its events again. */
  redeliver: boolean;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * A 3-D Secure payment's other half: the provider's events, as the shop
 * received them. Each delivery and what it did, from the shop's own log,
 * read while deliveries keep coming; the one that settled the order
 * stands out from the duplicates that changed nothing.
 */
export function ProviderEvents({ orderId, redeliver }: ProviderEventsProps) {
  const [webhooks, setWebhooks] = useState<OrderWebhooks | null>(null);
  const [watching, setWatching] = useState(true);
  // Bumped to watch again after asking for redeliveries.
  const [round, setRound] = useState(0);
  const [redelivery, setRedelivery] = useState<string | null>(null);
  const asked = useRef(false);

  useEffect(() => {
    let stopped = false;
    let quietLooks = 0;
    let seen = -1;
    async function look() {
      while (!stopped && keepWatching(quietLooks)) {
        const latest = await fetchOrderWebhooks(orderId);
        if (stopped) return;
        if (latest) {
          setWebhooks(latest);
          quietLooks = latest.deliveries.length === seen ? quietLooks + 1 : 0;
          seen = latest.deliveries.length;
        } else quietLooks++;
        await new Promise((resolve) => setTimeout(resolve, LOOK_INTERVAL_MS));
      }
      if (!stopped) setWatching(false);
    }
    void look();
    return () => {
      stopped = true;
    };
  }, [orderId, round]);

  // The demo's duplicates, asked for once the first delivery has settled the order.
  const settledByDelivery = webhooks?.deliveries.some((d) => describeDelivery(d.outcome).changed);
  useEffect(() => {
    if (!redeliver || !settledByDelivery || asked.current) return;
    asked.current = true;
    void redeliverWebhooks(orderId).then((result) => {
      setRedelivery(
        result.ok
          ? `Asked the provider to deliver ${plural(result.redelivery.events.length, "event")} again, ${result.redelivery.copiesPerEvent} times each: ten at once, then three late.`
          : `Could not ask for duplicates: ${result.reason}`,
      );
      setWatching(true);
      setRound((current) => current + 1);
    });
  }, [redeliver, settledByDelivery, orderId]);

  const summary = webhooks && summarizeDeliveries(webhooks);
  const first = webhooks?.deliveries[0];

  return (
    <section
      aria-labelledby="provider-events-heading"
      data-testid="provider-events"
      className="mt-5 rounded-xl border border-sand p-4 text-sm"
    >
      <h3 id="provider-events-heading" className="font-semibold text-espresso">
        From the payment provider
      </h3>
      <p
        className="mt-1 text-mocha"
        role="status"
        aria-live="polite"
        data-testid="provider-events-summary"
      >
        {!summary || summary.deliveries === 0
          ? watching
            ? "Waiting for the provider's event…"
            : "No event has arrived yet: the provider retries, and the recovery worker asks it in the end."
          : `${plural(summary.deliveries, "delivery", "deliveries")} of ${plural(summary.events, "event")}; ${plural(summary.changes, "delivery", "deliveries")} changed the order; shipped ${plural(summary.shipments, "time")}.`}
        {watching && summary && summary.deliveries > 0 && " Still listening…"}
      </p>
      {redelivery && (
        <p className="mt-1 text-mocha" data-testid="provider-events-redelivery">
          {redelivery}
        </p>
      )}
      {first && webhooks && (
        <ol
          className="mt-3 max-h-64 space-y-1.5 overflow-y-auto"
          aria-label="Deliveries, oldest first"
        >
          {webhooks.deliveries.map((delivery, index) => {
            const { label, changed } = describeDelivery(delivery.outcome);
            return (
              <li
                key={`${delivery.receivedAt}-${index}`}
                data-testid="provider-delivery"
                data-outcome={delivery.outcome}
                className="flex gap-2"
              >
                {changed ? (
                  <CheckIcon width={16} height={16} className="mt-0.5 shrink-0 text-sage" />
                ) : (
                  <RepeatIcon width={16} height={16} className="mt-0.5 shrink-0 text-mocha" />
                )}
                <span className="min-w-0">
                  <span className="font-mono text-xs tabular-nums text-mocha">
                    {offsetSeconds(delivery, first)}
                  </span>{" "}
                  <span className="font-mono text-xs text-espresso">{delivery.type}</span>{" "}
                  <span className={changed ? "font-semibold text-sage" : "text-mocha"}>
                    {label}
                  </span>
                </span>
              </li>
            );
          })}
        </ol>
      )}
      {watching && !first && <Spinner width={16} height={16} className="mt-2 text-mocha" />}
    </section>
  );
}
