import { describe, expect, it } from "vitest";
import { explainStorm } from "@/lib/lab/explain";

describe("explainStorm", () => {
  it("says why each broken strategy broke, with the server's counts", () => {
    expect(explainStorm({ strategy: "no_key", size: 10, orders: 10, charges: 10 })).toEqual({
      outcome: "broke",
      sentence: "Nothing tied the 10 requests to one purchase, so each one charged the card and wrote an order: 10 charges, 10 orders.",
    });
    const checkThenInsert = explainStorm({ strategy: "check_then_insert", size: 10, orders: 6, charges: 6 });
    expect(checkThenInsert.outcome).toBe("broke");
    expect(checkThenInsert.sentence).toContain("6 requests found no key and charged before the first one's INSERT committed");
    const claimAfterCharge = explainStorm({ strategy: "claim_after_charge", size: 10, orders: 1, charges: 6 });
    expect(claimAfterCharge.outcome).toBe("broke");
    expect(claimAfterCharge.sentence).toContain("5 charges belong to no order");
  });

  it("says the real checkout held when it made one order and one charge, and calls anything else a bug", () => {
    expect(explainStorm({ strategy: "atomic_claim", size: 50, orders: 1, charges: 1 })).toEqual({
      outcome: "held",
      sentence: "The key was claimed with INSERT … ON CONFLICT before the charge: one request charged, and the other 49 got 409 or the stored answer.",
    });
    const twice = explainStorm({ strategy: "atomic_claim", size: 50, orders: 1, charges: 2 });
    expect(twice.outcome).toBe("broke");
    expect(twice.sentence).toContain("This is a bug");
  });

  it("does not claim a broken strategy is safe when it happened not to break", () => {
    const verdict = explainStorm({ strategy: "check_then_insert", size: 2, orders: 1, charges: 1 });
    expect(verdict.outcome).toBe("lucky");
    expect(verdict.sentence).toContain("The window is still there");
  });
});
