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
    case "dynamodb_key_store":
    case "redis_key_store":
    case "powertools":
      if (once) {
        return {
          outcome: "held",
          sentence: `${RESERVATION[strategy]} let one request reserve the key before the charge: one charge, and the other ${size - 1} got 409 or the stored answer.`,
        };
      }
      return {
        outcome: "broke",
        sentence: `Expected one order and one charge, but the server reports ${times(orders, "order")} and ${times(charges, "charge")}.`,
      };
    case "atomic_claim":
      if (once) {
        return {
          outcome: "held",
          sentence: `The key was claimed with INSERT … ON CONFLICT before the charge: one request charged, and the other ${size - 1} got 409 or the stored answer.`,
        };
      }
      return {
        outcome: "broke",
        sentence: `Expected one order and one charge, but the server reports ${times(orders, "order")} and ${times(charges, "charge")}. This is a bug.`,
      };
  }
}

// What reserves the key in each copied design.
const RESERVATION = {
  dynamodb_key_store: "The conditional put (attribute_not_exists)",
  redis_key_store: "SET NX",
  powertools: "Powertools' conditional put",
} as const;

function lucky(strategy: LabStrategy): StormVerdict {
  return {
    outcome: "lucky",
    sentence: `One order and one charge this time: the requests did not overlap inside the window this strategy leaves open ("${LAB_STRATEGY_INFO[strategy].how}"). The window is still there: fire a bigger storm.`,
  };
}

/** The crash scenario's outcome, from the server's counts and what the retries got. */
export interface CrashCounts {
  strategy: LabStrategy;
  orders: number;
  charges: number;
  /** How long retries got 409, in seconds; null when none did. */
  inProgressSeconds: number | null;
  /** The final answer the retries got ("201", "201 replayed"…); null when none came. */
  final: string | null;
}

export function explainCrash({
  strategy,
  orders,
  charges,
  inProgressSeconds,
  final,
}: CrashCounts): StormVerdict {
  const booksAgree = orders === charges;
  const counts = `${charges} ${charges === 1 ? "charge" : "charges"}, ${orders} ${orders === 1 ? "order" : "orders"}`;
  const waited =
    inProgressSeconds === null ? "" : `retries got 409 for ${inProgressSeconds.toFixed(0)} s, `;
  const kind = LAB_STRATEGY_INFO[strategy].kind;
  if (charges === 1 && orders === 1) {
    return {
      outcome: "held",
      sentence:
        kind === "real"
          ? `The key kept its lease through the crash: ${waited}until the lease ran out; then ${final?.endsWith("replayed") ? "the recovery worker took the key over and finished the order with the first charge (the same provider key), and the next retry got its stored answer" : "a retry took the key over and finished the order with the first charge (the same provider key)"}: ${counts}.`
          : `One charge and one order: ${counts}.`,
    };
  }
  if (kind === "copied" && booksAgree === false) {
    return {
      outcome: "broke",
      sentence: `The key stayed IN_PROGRESS after the crash: ${waited}until it expired; then a retry reserved the key again and charged again: ${counts}. ${charges - orders === 1 ? "One charge has" : `${charges - orders} charges have`} no order.`,
    };
  }
  if (kind === "broken") {
    return {
      outcome: "broke",
      sentence: `Nothing had recorded the charge when the server crashed, so the retry charged again: ${counts}.`,
    };
  }
  return {
    outcome: booksAgree ? "held" : "broke",
    sentence: `${counts}${booksAgree ? "" : ": the books do not agree"}.`,
  };
}
