import { preferredWaitSeconds } from "@oncepay/idempotency/request";
import { PREFER_HEADER } from "@/lib/http/headers";

/** What `Prefer: wait=N` asks, in milliseconds; undefined when it asks nothing readable. */
export function preferredWaitMs(request: Request): number | undefined {
  const seconds = preferredWaitSeconds(request.headers.get(PREFER_HEADER));
  return seconds === undefined ? undefined : seconds * 1000;
}
