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
