import { serverEnv } from "@/lib/env";
import { labRedis } from "@/lib/lab/key-stores/connections";
import {
  chargeOnce,
  labIdempotencyKey,
  labInProgress,
  labReplay,
  labResponse,
  recordLabOutcome,
  runLabCheckout,
  type LabServices,
} from "@/lib/lab/lab-checkout";

/**
 * A COMMON DESIGN, run for real: a separate key store on Redis,
 * POST /api/lab/redis-orders. The same shape as the DynamoDB one: reserve
 * the key with `SET key IN_PROGRESS NX EX ttl` (only one request gets OK),
 * charge, write the order to its own database, then store the response
 * under the key (`SET … EX ttl`); on an error, DEL the key.
 *
 * Right: SET NX is atomic, so a storm of duplicates makes one charge.
 * Weaker: the key and the order are two writes to two systems, so a crash
 * between the charge and the second SET leaves IN_PROGRESS until the key
 * expires (409 until then), and the next retry charges again. Redis also
 * keeps its keys in memory: a restart without persistence forgets them all.
 */
const IN_PROGRESS = "IN_PROGRESS";

export async function createRedisKeyStoreOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "redis_key_store", async (checkout) => {
    const key = labIdempotencyKey(request);
    if (!key.ok) return key.response;
    const redis = await labRedis();
    const redisKey = `idem:${checkout.accountId}:${key.key}`;
    const expiry = serverEnv().LAB_KEY_EXPIRY_SECONDS;

    const reserved = await redis.set(redisKey, IN_PROGRESS, {
      condition: "NX",
      expiration: { type: "EX", value: expiry },
    });
    if (reserved !== "OK") {
      const stored = await redis.get(redisKey);
      if (stored && stored !== IN_PROGRESS) {
        const { status, body } = JSON.parse(stored) as { status: number; body: unknown };
        return labReplay({ responseStatus: status, responseBody: body });
      }
      return labInProgress(
        "Another request holds this key (IN_PROGRESS in Redis). Retry once it completes or expires.",
      );
    }

    try {
      const charged = await chargeOnce(checkout);
      await checkout.crashPoint("after-charge");
      const result = await recordLabOutcome(checkout.statements, checkout, charged, key.key);
      await redis.set(redisKey, JSON.stringify({ status: result.status, body: result.body }), {
        expiration: { type: "EX", value: expiry },
      });
      return labResponse(result);
    } catch (error) {
      await redis.del(redisKey).catch(() => undefined);
      throw error;
    }
  });
}
