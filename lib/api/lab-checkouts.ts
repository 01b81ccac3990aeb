import { createCheckThenInsertOrder } from "@/lib/lab/check-then-insert-checkout";
import { createClaimAfterChargeOrder } from "@/lib/lab/claim-after-charge-checkout";
import { createDynamoDbKeyStoreOrder } from "@/lib/lab/dynamodb-key-store-checkout";
import type { LabServices } from "@/lib/lab/lab-checkout";
import { createPowertoolsOrder } from "@/lib/lab/powertools-checkout";
import { createRedisKeyStoreOrder } from "@/lib/lab/redis-key-store-checkout";
import { createUnsafeOrder } from "@/lib/lab/unsafe-checkout";
import { getServices } from "@/lib/services";

/**
 * The lab's checkouts, each handed the database and the provider it runs on
 * (and nothing of the idempotency layer, which the lab must not use).
 */
function labServices(): LabServices {
  const { authenticator, labLimit, db, pool, statements, paymentProvider } = getServices();
  return { authenticator, labLimit, db, pool, statements, provider: paymentProvider };
}

type LabHandler = (request: Request, services: LabServices) => Promise<Response>;
const withLabServices = (handler: LabHandler) => (request: Request) =>
  handler(request, labServices());

export const labCheckouts = {
  checkThenInsert: withLabServices(createCheckThenInsertOrder),
  claimAfterCharge: withLabServices(createClaimAfterChargeOrder),
  dynamoDbKeyStore: withLabServices(createDynamoDbKeyStoreOrder),
  powertools: withLabServices(createPowertoolsOrder),
  redisKeyStore: withLabServices(createRedisKeyStoreOrder),
  unsafe: withLabServices(createUnsafeOrder),
};
