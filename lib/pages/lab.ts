import { demoFaultsEnabled } from "@/lib/demo/settings";
import { allowedStormSizes } from "@/lib/lab/storms";

/** What /lab needs from the server before any storm: the sizes it allows, and whether the broken strategies run here. */
export function labPageConfig(): { sizes: number[]; brokenStrategiesEnabled: boolean } {
  return { sizes: allowedStormSizes(), brokenStrategiesEnabled: demoFaultsEnabled() };
}
