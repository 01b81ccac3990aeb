import { describe, expect, it } from "vitest";
import type { KeyRequestAnswer } from "@/lib/generated/prisma/enums";
import { FIRST_KEPT, LATEST_KEPT } from "@/lib/idempotency/key-requests";
import { keyRequestsView, type StoredKeyRequest } from "@/lib/ledger/key-requests";

const at = (ms: number) => new Date(Date.UTC(2026, 11, 6, 12, 0, 0, ms));

function stored(
  nth: number,
  arrivedMs: number,
  answer: KeyRequestAnswer = "replay",
): StoredKeyRequest {
  return {
    nth,
    requestId: `req-${nth}`,
    receivedAt: at(arrivedMs),
    answeredAt: at(arrivedMs + 5),
    status: 201,
    answer,
  };
}

describe("keyRequestsView", () => {
  it("numbers requests in the order they arrived, not the order they were answered in", () => {
    // A double click: the second request's 409 is recorded before the first finishes paying.
    const view = keyRequestsView(
      [stored(1, 40, "conflict"), stored(2, 0, "completed"), stored(3, 900)],
      3,
    );
    expect(view).toMatchObject({ seen: 3, notKept: 0 });
    expect(view.data.map(({ attempt, requestId }) => [attempt, requestId])).toEqual([
      [1, "req-2"],
      [2, "req-1"],
      [3, "req-3"],
    ]);
  });

  it("shows the first and the latest kept, and numbers the latest past the ones not kept", () => {
    const seen = FIRST_KEPT + LATEST_KEPT + 7;
    const kept = [
      ...Array.from({ length: FIRST_KEPT }, (_, index) => index + 1),
      ...Array.from({ length: LATEST_KEPT }, (_, index) => seen - LATEST_KEPT + index + 1),
    ];
    const view = keyRequestsView(
      kept.map((nth) => stored(nth, nth * 10)),
      seen,
    );
    expect(view.notKept).toBe(7);
    expect(view.data.map((request) => request.attempt)).toEqual(kept);
  });

  it("shows no more than the bound when a few extra are still stored, and counts them as not kept", () => {
    const seen = FIRST_KEPT + LATEST_KEPT + 2;
    const all = Array.from({ length: seen }, (_, index) => stored(index + 1, index * 10));
    const view = keyRequestsView(all, seen);
    expect(view.data).toHaveLength(FIRST_KEPT + LATEST_KEPT);
    expect(view.notKept).toBe(2);
    expect(view.data.at(-1)).toMatchObject({ attempt: seen, requestId: `req-${seen}` });
  });

  it("has nothing to show for a key with no recorded request", () => {
    expect(keyRequestsView([], 0)).toEqual({ seen: 0, notKept: 0, data: [] });
  });
});
