import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
  makeIdempotent,
} from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import { serverEnv } from "@/lib/env";
import { problemResponse, problemType } from "@/lib/http/problem";
import { LAB_POWERTOOLS_TABLE, labDynamoDb } from "@/lib/lab/key-stores/connections";
import {
  chargeOnce,
  labIdempotencyKey,
  labInProgress,
  labReplay,
  labResponse,
  recordLabOutcome,
  runLabCheckout,
  type LabServices,
  type LabCheckout,
  type LabResult,
} from "@/lib/lab/lab-checkout";

/**
 * A COMMON DESIGN, run for real: AWS Lambda Powertools' idempotency utility
 * (`makeIdempotent`, its DynamoDB persistence layer) wrapping the lab's
 * checkout, POST /api/lab/powertools-orders. Configured as its documentation
 * says for this use: the key is the Idempotency-Key header (with the account,
 * so that two shoppers never share one) via `eventKeyJmesPath`, payload
 * validation on the body, `expiresAfterSeconds` raised to a day for payments.
 *
 * Outside Lambda it needs one thing more. Powertools bounds how long a
 * record may stay INPROGRESS by the Lambda invocation's remaining time
 * (`context.getRemainingTimeInMillis()`, read when the record is written).
 * There is no Lambda here, so each call passes a context whose remaining
 * time is the lab's key expiry (LAB_KEY_EXPIRY_SECONDS). Without one,
 * Powertools warns and writes no in-progress expiry: a record left
 * INPROGRESS by a crash then blocks its key (409) until the whole record
 * expires, a day later.
 *
 * Right: the conditional put makes a storm of duplicates charge once, and
 * the stored result is replayed. Weaker: the result and the order are two
 * writes to two systems. A crash after the charge leaves the record
 * INPROGRESS until its in-progress expiry, and the next retry runs the
 * checkout, and charges, again; an error there deletes the record (so that
 * a retry can run), and the retry charges again at once.
 */
const RECORD_LIFETIME_SECONDS = 24 * 60 * 60;
/** Powertools names each record `<prefix>#<hash of the key data>`. */
export const POWERTOOLS_KEY_PREFIX = "oncepay-lab-checkout";

// Built once the lab's DynamoDB is up: a persistence layer holds no per-request state.
let persistence: Promise<DynamoDBPersistenceLayer> | undefined;

function persistenceStore(): Promise<DynamoDBPersistenceLayer> {
  persistence ??= labDynamoDb().then(
    ({ client }) =>
      new DynamoDBPersistenceLayer({ tableName: LAB_POWERTOOLS_TABLE, awsSdkV3Client: client }),
  );
  return persistence;
}

/** The one part of a Lambda context Powertools needs. */
interface LambdaLikeContext {
  getRemainingTimeInMillis(): number;
}

/** What Powertools is given: the request as a Lambda behind an API would see it. */
interface CheckoutEvent {
  accountId: string;
  headers: { "idempotency-key": string };
  body: LabCheckout["cart"];
}

export async function createPowertoolsOrder(
  request: Request,
  services: LabServices,
): Promise<Response> {
  return runLabCheckout(request, services, "powertools", async (checkout) => {
    const key = labIdempotencyKey(request);
    if (!key.ok) return key.response;
    let ran = false;
    // Made per request: registering a Lambda context writes into the config.
    const idempotentCheckout = makeIdempotent(
      async (event: CheckoutEvent): Promise<LabResult> => {
        ran = true;
        const charged = await chargeOnce(checkout);
        await checkout.crashPoint("after-charge");
        return recordLabOutcome(
          checkout.statements,
          checkout,
          charged,
          event.headers["idempotency-key"],
        );
      },
      {
        persistenceStore: await persistenceStore(),
        keyPrefix: POWERTOOLS_KEY_PREFIX,
        config: new IdempotencyConfig({
          eventKeyJmesPath: '[accountId, headers."idempotency-key"]',
          payloadValidationJmesPath: "body",
          throwOnNoIdempotencyKey: true,
          expiresAfterSeconds: RECORD_LIFETIME_SECONDS,
        }),
      },
      // Called as a Lambda handler is, (event, context): Powertools registers
      // the context and reads the remaining time from it.
    ) as (event: CheckoutEvent, context: LambdaLikeContext) => Promise<LabResult>;
    const remainingMs = serverEnv().LAB_KEY_EXPIRY_SECONDS * 1000;
    try {
      const result = await idempotentCheckout(
        {
          accountId: checkout.accountId,
          headers: { "idempotency-key": key.key },
          body: checkout.cart,
        },
        { getRemainingTimeInMillis: () => remainingMs },
      );
      return ran
        ? labResponse(result)
        : labReplay({ responseStatus: result.status, responseBody: result.body });
    } catch (error) {
      if (error instanceof IdempotencyAlreadyInProgressError) {
        return labInProgress(
          "Powertools holds an INPROGRESS record for this key. Retry once it completes, or after its in-progress expiry.",
        );
      }
      if (error instanceof IdempotencyValidationError) {
        return problemResponse({
          type: problemType("idempotency-key-reused"),
          title: "Idempotency key reused with a different request",
          status: 422,
          detail: "Powertools' payload validation found another body under this key.",
        });
      }
      if (error instanceof IdempotencyPersistenceLayerError) throw error.cause ?? error;
      throw error;
    }
  });
}
