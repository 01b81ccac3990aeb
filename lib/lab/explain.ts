import { LAB_STRATEGY_INFO, type LabStrategy } from "@/lib/lab/strategies";

/**
 * One sentence per storm: why a strategy broke, or why it held, from the
 * counts the server reported. Pure, so the page and its tests share it.
 */
export interface StormCounts {
  strategy: LabStrategy;
  size: number;
  orders: number;
  /** Successful charges at the payment provider. */
  charges: number;
}

export interface StormVerdict {
  /** "broke": more charges (or orders) than one purchase; "held": one of each; "lucky": a broken strategy that happened not to break. */
  outcome: "broke" | "held" | "lucky";
  sentence: string;
}

export function explainStorm({ strategy, size, orders, charges }: StormCounts): StormVerdict {
  const once = charges === 1 && orders === 1;
  const times = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  switch (strategy) {
    case "no_key":
      if (once) return lucky(strategy);
      return {
        outcome: "broke",
        sentence: `Nothing tied the ${size} requests to one purchase, so each one charged the card and wrote an order: ${times(charges, "charge")}, ${times(orders, "order")}.`,
      };
    case "check_then_insert":
      if (once) return lucky(strategy);
      return {
        outcome: "broke",
        sentence: `${times(charges, "request")} found no key and charged before the first one's INSERT committed (the charge sits between the check and the insert), and with no unique constraint each wrote its own order: ${times(orders, "order")}.`,
      };
    case "claim_after_charge":
      if (once) return lucky(strategy);
      return {
        outcome: "broke",
        sentence: `The unique key let ${times(orders, "request")} write the order, but ${times(charges, "request")} had already charged before claiming it: ${times(Math.max(0, charges - orders), "charge")} belong to no order.`,
      };
    case "atomic_claim":
      if (once) {
        return {
          outcome: "held",
          sentence: `The key was claimed with INSERT … ON CONFLICT before the charge: one request charged, and the other ${size - 1} got 409 or the stored answer.`,
        };
      }
      return { outcome: "broke", sentence: `Expected one order and one charge, but the server reports ${times(orders, "order")} and ${times(charges, "charge")}. This is a bug.` };
  }
}

function lucky(strategy: LabStrategy): StormVerdict {
  return {
    outcome: "lucky",
    sentence: `One order and one charge this time: the requests did not overlap inside the window this strategy leaves open ("${LAB_STRATEGY_INFO[strategy].how}"). The window is still there: fire a bigger storm.`,
  };
}
