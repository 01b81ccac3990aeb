import { demoFaultsEnabled } from "@/lib/demo/settings";
import { serverEnv } from "@/lib/env";
import { allowedStormSizes } from "@/lib/lab/storms";

/** What /lab needs from the server before any run: the storm sizes it allows, whether its own strategies run here, and the expiries of the crash scenario. */
export function labPageConfig(): {
  sizes: number[];
  brokenStrategiesEnabled: boolean;
  keyExpirySeconds: number;
  leaseSeconds: number;
} {
  const env = serverEnv();
  return {
    sizes: allowedStormSizes(),
    brokenStrategiesEnabled: demoFaultsEnabled(),
    keyExpirySeconds: env.LAB_KEY_EXPIRY_SECONDS,
    leaseSeconds: env.IDEMPOTENCY_LEASE_SECONDS,
  };
}
