import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { serverEnv } from "@/lib/env";
import { LAB_KEYS_TABLE, labDynamoDb } from "@/lib/lab/key-stores/connections";
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
 * A COMMON DESIGN, run for real: the separate key store of the classic
 * DynamoDB example, POST /api/lab/dynamodb-orders.
 *
 *   1. reserve: a conditional put of {pk: "IDEMP#…", status: IN_PROGRESS,
 *      ttl} that only one request can win (attribute_not_exists(pk));
 *   2. the loser reads the item: IN_PROGRESS → 409, COMPLETED → the stored
 *      response;
 *   3. the winner charges, writes the order to its own database, then
 *      updates the item to COMPLETED with the response;
 *   4. on an error, it deletes the item so that a retry can run.
 *
 * What it gets right: a storm of duplicates makes one charge, since the
 * put is atomic. What it cannot do: the order and the COMPLETED update are
 * two writes to two systems. A crash between the charge and the update
 * leaves the item IN_PROGRESS, so every retry gets 409 until the ttl, and
 * after the ttl the next retry charges again; an error there deletes the
 * item, and the retry charges again at once. DynamoDB deletes expired items
 * within days rather than on time, so the put also takes over an item whose
 * ttl has passed (`OR #ttl < :now`), as Powertools' does.
 */
export async function createDynamoDbKeyStoreOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "dynamodb_key_store", async (checkout) => {
    const key = labIdempotencyKey(request);
    if (!key.ok) return key.response;
    const dynamo = (await labDynamoDb()).doc;
    // Scoped to the account, as OncePay's keys are: two shoppers never share one.
    const pk = `IDEMP#${checkout.accountId}#${key.key}`;
    const now = Math.floor(Date.now() / 1000);

    try {
      await dynamo.send(
        new PutCommand({
          TableName: LAB_KEYS_TABLE,
          Item: { pk, status: "IN_PROGRESS", ttl: now + serverEnv().LAB_KEY_EXPIRY_SECONDS },
          ConditionExpression: "attribute_not_exists(pk) OR #ttl < :now",
          ExpressionAttributeNames: { "#ttl": "ttl" },
          ExpressionAttributeValues: { ":now": now },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const { Item: item } = await dynamo.send(
        new GetCommand({ TableName: LAB_KEYS_TABLE, Key: { pk }, ConsistentRead: true }),
      );
      if (item?.status === "COMPLETED")
        return labReplay({
          responseStatus: item.responseStatus as number,
          responseBody: item.responseBody,
        });
      return labInProgress(
        "Another request holds this key (its item is IN_PROGRESS in DynamoDB). Retry after its ttl has passed, or once it completes.",
      );
    }

    try {
      const charged = await chargeOnce(checkout);
      await checkout.crashPoint("after-charge");
      // The order, in its own database: not in the same transaction as the key.
      const result = await recordLabOutcome(checkout.statements, checkout, charged, key.key);
      await dynamo.send(
        new UpdateCommand({
          TableName: LAB_KEYS_TABLE,
          Key: { pk },
          UpdateExpression:
            "SET #status = :completed, responseStatus = :status, responseBody = :body",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":completed": "COMPLETED",
            ":status": result.status,
            ":body": result.body,
          },
        }),
      );
      return labResponse(result);
    } catch (error) {
      // As the guides do: free the key so that a retry can run.
      await dynamo
        .send(new DeleteCommand({ TableName: LAB_KEYS_TABLE, Key: { pk } }))
        .catch(() => undefined);
      throw error;
    }
  });
}
