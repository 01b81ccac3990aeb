import { describe, expect, it } from "vitest";
import { explainCrash, explainStorm } from "@/lib/lab/explain";

describe("explainStorm", () => {
  it("says why each broken strategy broke, with the server's counts", () => {
    expect(explainStorm({ strategy: "no_key", size: 10, orders: 10, charges: 10 })).toEqual({
      outcome: "broke",
      sentence:
        "Nothing tied the 10 requests to one purchase, so each one charged the card and wrote an order: 10 charges, 10 orders.",
    });
    const checkThenInsert = explainStorm({
      strategy: "check_then_insert",
      size: 10,
      orders: 6,
      charges: 6,
    });
    expect(checkThenInsert.outcome).toBe("broke");
    expect(checkThenInsert.sentence).toContain(
      "6 requests found no key and charged before the first one's INSERT committed",
    );
    const claimAfterCharge = explainStorm({
      strategy: "claim_after_charge",
      size: 10,
      orders: 1,
      charges: 6,
    });
    expect(claimAfterCharge.outcome).toBe("broke");
    expect(claimAfterCharge.sentence).toContain("5 charges belong to no order");
  });

  it("says the real checkout held when it made one order and one charge, and calls anything else a bug", () => {
    expect(explainStorm({ strategy: "atomic_claim", size: 50, orders: 1, charges: 1 })).toEqual({
      outcome: "held",
      sentence:
        "The key was claimed with INSERT … ON CONFLICT before the charge: one request charged, and the other 49 got 409 or the stored answer.",
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

describe("explainCrash", () => {
  it("says OncePay held: one charge and one order after waiting out its lease", () => {
    const verdict = explainCrash({
      strategy: "atomic_claim",
      orders: 1,
      charges: 1,
      inProgressSeconds: 30.4,
      final: "201",
    });
    expect(verdict.outcome).toBe("held");
    expect(verdict.sentence).toContain("retries got 409 for 30 s");
    expect(verdict.sentence).toContain(
      "a retry took the key over and finished the order with the first charge (the same provider key)",
    );
    expect(
      explainCrash({
        strategy: "atomic_claim",
        orders: 1,
        charges: 1,
        inProgressSeconds: 31,
        final: "201 replayed",
      }).sentence,
    ).toContain("the recovery worker took the key over");
  });

  it("says a copied design broke when the retry after its expiry charged again, and how many charges have no order", () => {
    const verdict = explainCrash({
      strategy: "powertools",
      orders: 1,
      charges: 2,
      inProgressSeconds: 20.6,
      final: "201",
    });
    expect(verdict).toEqual({
      outcome: "broke",
      sentence:
        "The key stayed IN_PROGRESS after the crash: retries got 409 for 21 s, until it expired; then a retry reserved the key again and charged again: 2 charges, 1 order. One charge has no order.",
    });
  });

  it("says a broken strategy charged again at once", () => {
    expect(
      explainCrash({
        strategy: "no_key",
        orders: 1,
        charges: 2,
        inProgressSeconds: null,
        final: "201",
      }).sentence,
    ).toContain("the retry charged again: 2 charges, 1 order");
  });
});
