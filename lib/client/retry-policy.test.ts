import { describe, expect, it } from "vitest";
import {
  RETRY_POLICY,
  SERVER_KEY_LIFETIME_MS,
  backoffCeilingMs,
  fullJitterDelayMs,
  isRetryableStatus,
  budgetUnderKeyMs,
  nextRetryDelayMs,
  parseKeyRetentionSeconds,
  parseRetryAfterMs,
  worstCaseRunMs,
} from "./retry-policy";

describe("isRetryableStatus", () => {
  it.each([409, 429, 500, 502, 503, 504])("retries %i", (status) => {
    expect(isRetryableStatus(status)).toBe(true);
  });

  it.each([200, 201, 400, 401, 402, 404, 413, 415, 422])("does not retry %i", (status) => {
    expect(isRetryableStatus(status)).toBe(false);
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it("reads delay-seconds and HTTP dates", () => {
    expect(parseRetryAfterMs("1", now)).toBe(1000);
    expect(parseRetryAfterMs(" 2 ", now)).toBe(2000);
    expect(parseRetryAfterMs("Wed, 01 Jan 2025 00:00:05 GMT", now)).toBe(5000);
  });

  it("treats a date in the past as now, and anything unreadable as absent", () => {
    expect(parseRetryAfterMs("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfterMs(null, now)).toBeNull();
    expect(parseRetryAfterMs("soon", now)).toBeNull();
    expect(parseRetryAfterMs("-3", now)).toBeNull();
  });
});

describe("backoff", () => {
  it("doubles from the base up to the cap", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((retry) => backoffCeilingMs(retry))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
  });

  it("uses full jitter: a uniform draw in [0, ceiling)", () => {
    expect(fullJitterDelayMs(3, () => 0)).toBe(0);
    expect(fullJitterDelayMs(3, () => 0.5)).toBe(1000);
    expect(fullJitterDelayMs(3, () => 0.999_999)).toBe(1999);
    expect(fullJitterDelayMs(10, () => 0.25)).toBe(2000);
  });
});

describe("nextRetryDelayMs", () => {
  it("backs off when there is no Retry-After", () => {
    expect(
      nextRetryDelayMs({ attempt: 2, retryAfter: null, elapsedMs: 0, random: () => 0.5 }),
    ).toBe(500);
  });

  it("waits at least the Retry-After, capped at 15 s", () => {
    expect(nextRetryDelayMs({ attempt: 1, retryAfter: "1", elapsedMs: 0, random: () => 0.5 })).toBe(
      1000,
    );
    expect(
      nextRetryDelayMs({ attempt: 1, retryAfter: "3600", elapsedMs: 0, random: () => 0 }),
    ).toBe(15_000);
  });

  it("keeps backing off under a short Retry-After, so a long-held key is not asked every second", () => {
    // Retry 5: the jittered backoff (half of 8 s) is longer than Retry-After: 1.
    expect(nextRetryDelayMs({ attempt: 5, retryAfter: "1", elapsedMs: 0, random: () => 0.5 })).toBe(
      4000,
    );
  });

  it("stops after the last attempt", () => {
    expect(
      nextRetryDelayMs({
        attempt: RETRY_POLICY.maxAttempts - 1,
        retryAfter: null,
        elapsedMs: 0,
        random: () => 0,
      }),
    ).toBe(0);
    expect(
      nextRetryDelayMs({
        attempt: RETRY_POLICY.maxAttempts,
        retryAfter: null,
        elapsedMs: 0,
        random: () => 0,
      }),
    ).toBeNull();
  });

  it("stops when the next attempt would start outside the budget", () => {
    expect(nextRetryDelayMs({ attempt: 2, retryAfter: "5", elapsedMs: 54_999 })).toBe(5000);
    expect(nextRetryDelayMs({ attempt: 2, retryAfter: "5", elapsedMs: 55_000 })).toBeNull();
  });
});

describe("the key's retention", () => {
  it("reads it from Idempotency-Key-Policy, in any order, and nothing else", () => {
    expect(parseKeyRetentionSeconds("retention=86400, lease=30")).toBe(86_400);
    expect(parseKeyRetentionSeconds("lease=30,retention=60")).toBe(60);
    expect(parseKeyRetentionSeconds("lease=30")).toBeNull();
    expect(parseKeyRetentionSeconds("myretention=5")).toBeNull();
    expect(parseKeyRetentionSeconds(null)).toBeNull();
  });

  it("shortens the budget so the last attempt ends in the key's first half-life", () => {
    expect(budgetUnderKeyMs(RETRY_POLICY, undefined)).toBe(RETRY_POLICY.budgetMs);
    expect(budgetUnderKeyMs(RETRY_POLICY, 86_400)).toBe(RETRY_POLICY.budgetMs);
    expect(budgetUnderKeyMs(RETRY_POLICY, 60)).toBe(30_000 - RETRY_POLICY.attemptTimeoutMs);
    expect(
      nextRetryDelayMs({ attempt: 1, retryAfter: "1", elapsedMs: 23_000, keyRetentionSeconds: 60 }),
    ).toBeNull();
    expect(
      nextRetryDelayMs({
        attempt: 1,
        retryAfter: "1",
        elapsedMs: 22_000,
        keyRetentionSeconds: 60,
        random: () => 0,
      }),
    ).toBe(1000);
  });
});

describe("the wait an attempt asks for", () => {
  it("ends inside the attempt's own timeout, so the server's answer always arrives", () => {
    expect(RETRY_POLICY.waitForFirstSeconds).toBeGreaterThan(0);
    expect(RETRY_POLICY.waitForFirstSeconds * 1000).toBeLessThan(RETRY_POLICY.attemptTimeoutMs);
  });
});

describe("the budget", () => {
  it("ends every run more than a thousand times inside the server's 24 h key lifetime", () => {
    expect(RETRY_POLICY.budgetMs).toBe(60_000);
    expect(worstCaseRunMs()).toBe(66_000);
    expect(worstCaseRunMs() * 1000).toBeLessThan(SERVER_KEY_LIFETIME_MS);
  });
});
