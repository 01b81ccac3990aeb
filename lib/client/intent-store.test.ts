import { describe, expect, it } from "vitest";
import {
  AUTO_RESUME_WINDOW_MS,
  INTENT_MAX_AGE_MS,
  createIntentStore,
  intentMaxAgeMs,
  samePayload,
  shouldAutoResume,
  startRun,
  type StoredIntent,
} from "./intent-store";
import { SERVER_KEY_LIFETIME_MS } from "./retry-policy";
import { MemoryStorage } from "@/lib/testing/browser";

const NOW = Date.parse("2025-01-01T12:00:00Z");

/** An entry as saved before StoredIntent had lastRunAt. */
function savedWithoutLastRunAt(storage: Storage, stored: StoredIntent) {
  const legacy: Partial<StoredIntent> = { ...stored };
  delete legacy.lastRunAt;
  storage.setItem(`oncepay.intent.${stored.cartId}`, JSON.stringify(legacy));
}

/** An intent whose only run began with it, unless the overrides say otherwise. */
function intent(overrides: Partial<StoredIntent> = {}): StoredIntent {
  const createdAt = overrides.createdAt ?? NOW;
  return {
    cartId: "cart-1",
    idempotencyKey: "key-1",
    items: [{ sku: "mug-ceramic-350", quantity: 2 }],
    paymentMethod: "pm_card_visa",
    createdAt,
    lastRunAt: createdAt,
    state: "sending",
    attempts: [],
    ...overrides,
  };
}

describe("intent store", () => {
  it("keeps one intent per cart, and reads it back whole", () => {
    const storage = new MemoryStorage();
    const store = createIntentStore(storage, () => NOW);
    store.save(intent());
    store.save(intent({ cartId: "cart-2", idempotencyKey: "key-2" }));

    expect(store.load("cart-1")).toEqual(intent());
    expect(store.load("cart-2")?.idempotencyKey).toBe("key-2");
    expect(store.load("cart-3")).toBeNull();
    expect(storage.length).toBe(2);
  });

  it("replaces a cart's intent when it is saved again, and forgets it when removed", () => {
    const store = createIntentStore(new MemoryStorage(), () => NOW);
    store.save(intent());
    store.save(intent({ state: "unresolved" }));
    expect(store.load("cart-1")?.state).toBe("unresolved");
    store.remove("cart-1");
    expect(store.load("cart-1")).toBeNull();
  });

  it("finds the tab's most recent intent after a reload, when the page does not know its cart yet", () => {
    const storage = new MemoryStorage();
    storage.setItem("unrelated", "{}");
    const store = createIntentStore(storage, () => NOW);
    store.save(intent({ cartId: "old", createdAt: NOW - 5000 }));
    store.save(intent({ cartId: "new", createdAt: NOW - 10 }));
    expect(store.latest()?.cartId).toBe("new");
    expect(createIntentStore(new MemoryStorage()).latest()).toBeNull();
  });

  it("forgets intents older than half the key lifetime, and anything that is not an intent", () => {
    const storage = new MemoryStorage();
    const store = createIntentStore(storage, () => NOW);
    store.save(intent({ cartId: "stale", createdAt: NOW - INTENT_MAX_AGE_MS - 1 }));
    storage.setItem("oncepay.intent.junk", "{not json");
    storage.setItem(
      "oncepay.intent.wrong",
      JSON.stringify({ ...intent(), paymentMethod: "pm_card_amex" }),
    );
    storage.setItem("oncepay.intent.empty", JSON.stringify({ ...intent(), items: [] }));

    expect(store.load("stale")).toBeNull();
    expect(store.latest()).toBeNull();
    expect(storage.length).toBe(0);
    expect(INTENT_MAX_AGE_MS).toBe(SERVER_KEY_LIFETIME_MS / 2);
  });

  it("forgets an intent after half its key's life when the server said it keeps keys for less", () => {
    const storage = new MemoryStorage();
    let now = NOW;
    const store = createIntentStore(storage, () => now);
    store.save(intent({ cartId: "short", keyRetentionSeconds: 60 }));
    now = NOW + 29_000;
    expect(store.load("short")).toMatchObject({ keyRetentionSeconds: 60 });
    now = NOW + 30_001;
    expect(store.load("short")).toBeNull();
    expect(intentMaxAgeMs(86_400 * 30)).toBe(INTENT_MAX_AGE_MS);
  });

  it("reads an entry saved without lastRunAt as one whose latest run began with the intent", () => {
    const storage = new MemoryStorage();
    savedWithoutLastRunAt(storage, intent({ createdAt: NOW - 60_000 }));
    expect(createIntentStore(storage, () => NOW).load("cart-1")).toEqual(
      intent({ createdAt: NOW - 60_000 }),
    );
  });

  it("after a reload, picks the intent that ran most recently, not the one made most recently", () => {
    const store = createIntentStore(new MemoryStorage(), () => NOW);
    store.save(intent({ cartId: "paid-again", createdAt: NOW - 3_600_000, lastRunAt: NOW - 1000 }));
    store.save(intent({ cartId: "newer", createdAt: NOW - 60_000, state: "unresolved" }));
    expect(store.latest()?.cartId).toBe("paid-again");
  });

  it("drops a malformed attempt log but keeps the intent and its key", () => {
    const storage = new MemoryStorage();
    storage.setItem(
      "oncepay.intent.cart-1",
      JSON.stringify({ ...intent(), attempts: [{ nonsense: true }] }),
    );
    expect(createIntentStore(storage, () => NOW).load("cart-1")).toEqual(intent());
  });

  it("keeps working, without persistence, when storage refuses writes or is missing", () => {
    const storage = new MemoryStorage();
    storage.failWrites = true;
    const store = createIntentStore(storage, () => NOW);
    expect(() => store.save(intent())).not.toThrow();
    expect(store.load("cart-1")).toBeNull();

    const none = createIntentStore(null);
    expect(() => none.save(intent())).not.toThrow();
    expect(none.latest()).toBeNull();
  });
});

describe("samePayload", () => {
  it("is the same request only for the same items, in order, and the same card", () => {
    const a = intent();
    expect(
      samePayload(a, {
        items: [{ sku: "mug-ceramic-350", quantity: 2 }],
        paymentMethod: "pm_card_visa",
      }),
    ).toBe(true);
    expect(
      samePayload(a, {
        items: [{ sku: "mug-ceramic-350", quantity: 3 }],
        paymentMethod: "pm_card_visa",
      }),
    ).toBe(false);
    expect(samePayload(a, { items: a.items, paymentMethod: "pm_card_chargeDeclined" })).toBe(false);
  });
});

describe("startRun", () => {
  it("marks the intent as sending and records when this run began, keeping its key and age", () => {
    const unresolved = intent({ state: "unresolved", createdAt: NOW - 3_600_000 });
    expect(startRun(unresolved, NOW)).toEqual({ ...unresolved, state: "sending", lastRunAt: NOW });
  });
});

describe("shouldAutoResume", () => {
  it("resumes only a run a reload cut short, and only soon after it began", () => {
    expect(shouldAutoResume(intent(), NOW + 1000)).toBe(true);
    expect(shouldAutoResume(intent({ state: "unresolved" }), NOW + 1000)).toBe(false);
    expect(shouldAutoResume(intent(), NOW + AUTO_RESUME_WINDOW_MS)).toBe(false);
    expect(AUTO_RESUME_WINDOW_MS).toBeLessThan(SERVER_KEY_LIFETIME_MS);
  });

  it("counts the window from the latest run, not from when the intent began", () => {
    // Given up on an hour ago, paid again just now, and the page reloaded mid-run: resume.
    const payingAgain = startRun(
      intent({ state: "unresolved", createdAt: NOW - 3_600_000 }),
      NOW - 5000,
    );
    expect(shouldAutoResume(payingAgain, NOW)).toBe(true);
    // A run that began longer ago than the window waits for Pay, however young the intent.
    expect(
      shouldAutoResume(intent({ createdAt: NOW, lastRunAt: NOW - AUTO_RESUME_WINDOW_MS }), NOW),
    ).toBe(false);
  });

  it("counts from createdAt for an entry saved before lastRunAt existed", () => {
    const storage = new MemoryStorage();
    savedWithoutLastRunAt(storage, intent({ createdAt: NOW - AUTO_RESUME_WINDOW_MS }));
    const loaded = createIntentStore(storage, () => NOW).load("cart-1");
    expect(loaded && shouldAutoResume(loaded, NOW)).toBe(false);
    expect(loaded && shouldAutoResume(loaded, NOW - 1)).toBe(true);
  });
});
