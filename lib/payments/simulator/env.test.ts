import { describe, expect, it } from "vitest";
import { newAdminKey } from "@/lib/payments/simulator/admin-key";
import { simulatorEnv } from "@/lib/payments/simulator/env";

const DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/oncepay";
const SIMULATOR_ADMIN_KEY = newAdminKey();
const envOf = (variables: Record<string, string>) =>
  simulatorEnv({ NODE_ENV: "test", DATABASE_URL, SIMULATOR_ADMIN_KEY, ...variables });

describe("SIMULATOR_API_KEYS", () => {
  it("lists the keys the simulator accepts, comma-separated; unset is none", () => {
    expect(
      envOf({ SIMULATOR_API_KEYS: "sk_test_shop, rk_test_reports ," }).SIMULATOR_API_KEYS,
    ).toEqual(["sk_test_shop", "rk_test_reports"]);
    expect(envOf({}).SIMULATOR_API_KEYS).toEqual([]);
  });

  it.each([["sk_live_real"], ["rk_live_real"], ["pk_test_publishable"], ["sk_test_has-a-dash"]])(
    "refuses %s at start-up",
    (key) => {
      expect(() => envOf({ SIMULATOR_API_KEYS: `sk_test_fine,${key}` })).toThrow(
        /SIMULATOR_API_KEYS must list test-mode keys/,
      );
    },
  );
});

describe("SIMULATOR_ADMIN_KEY", () => {
  it("is required: the admin API takes no call without it", () => {
    expect(() => simulatorEnv({ NODE_ENV: "test", DATABASE_URL })).toThrow(
      /SIMULATOR_ADMIN_KEY is not set/,
    );
    expect(envOf({}).SIMULATOR_ADMIN_KEY).toBe(SIMULATOR_ADMIN_KEY);
  });

  it.each([["short"], ["a".repeat(31)], [`${"a".repeat(20)} ${"b".repeat(20)}`]])(
    "refuses %j at start-up",
    (key) => {
      expect(() => envOf({ SIMULATOR_ADMIN_KEY: key })).toThrow(
        /SIMULATOR_ADMIN_KEY must be at least 32 characters/,
      );
    },
  );
});

describe("SIMULATOR_ALLOWED_HOSTS", () => {
  it("lists the names it answers to besides the loopback ones, comma-separated; unset is none", () => {
    expect(
      envOf({ SIMULATOR_ALLOWED_HOSTS: "payments.internal, [fd00::5] ," }).SIMULATOR_ALLOWED_HOSTS,
    ).toEqual(["payments.internal", "[fd00::5]"]);
    expect(envOf({}).SIMULATOR_ALLOWED_HOSTS).toEqual([]);
  });

  it.each([["payments.internal:12111"], ["http://payments.internal"], ["a b"], ["fd00::5"]])(
    "refuses %j at start-up",
    (names) => {
      expect(() => envOf({ SIMULATOR_ALLOWED_HOSTS: names })).toThrow(
        /SIMULATOR_ALLOWED_HOSTS must list host names/,
      );
    },
  );
});

describe("webhook settings", () => {
  const secret = `whsec_${"a".repeat(32)}`;

  it("takes an endpoint's URL and secret together, and a retry schedule in ms, s, m and h", () => {
    const env = envOf({
      SIMULATOR_WEBHOOK_URL: "http://127.0.0.1:3000/api/webhooks/stripe",
      SIMULATOR_WEBHOOK_SECRET: secret,
      SIMULATOR_WEBHOOK_RETRIES: "500ms, 2s,1m,1h",
    });
    expect(env.SIMULATOR_WEBHOOK_URL).toBe("http://127.0.0.1:3000/api/webhooks/stripe");
    expect(env.SIMULATOR_WEBHOOK_RETRIES).toEqual([500, 2_000, 60_000, 3_600_000]);
    expect(envOf({}).SIMULATOR_WEBHOOK_RETRIES).toBeUndefined();
    expect(envOf({ SIMULATOR_WEBHOOK_RETRIES: "" }).SIMULATOR_WEBHOOK_RETRIES).toEqual([]);
  });

  it.each([
    [{ SIMULATOR_WEBHOOK_URL: "http://127.0.0.1:3000/hooks" }, /set both or neither/],
    [{ SIMULATOR_WEBHOOK_SECRET: secret }, /set both or neither/],
    [
      { SIMULATOR_WEBHOOK_URL: "ftp://x/hooks", SIMULATOR_WEBHOOK_SECRET: secret },
      /SIMULATOR_WEBHOOK_URL/,
    ],
    [
      { SIMULATOR_WEBHOOK_URL: "http://x/h", SIMULATOR_WEBHOOK_SECRET: "whsec_short" },
      /must be whsec_/,
    ],
    [{ SIMULATOR_WEBHOOK_RETRIES: "1s,soon" }, /SIMULATOR_WEBHOOK_RETRIES must list waits/],
    [{ SIMULATOR_WEBHOOK_RETRIES: "25h" }, /SIMULATOR_WEBHOOK_RETRIES must list waits/],
    [
      { SIMULATOR_WEBHOOK_RETRIES: Array(21).fill("1s").join(",") },
      /SIMULATOR_WEBHOOK_RETRIES must list waits/,
    ],
    [{ SIMULATOR_PUBLIC_URL: "not a url" }, /SIMULATOR_PUBLIC_URL/],
  ])("refuses %j at start-up", (variables, message) => {
    expect(() => envOf(variables)).toThrow(message);
  });
});
