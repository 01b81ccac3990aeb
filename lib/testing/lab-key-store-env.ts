/**
 * What an app needs to use the strategy lab's key stores that a test run
 * started (the global setup's dynalite and redis-server) as configured
 * endpoints, as a deployment would point it at DynamoDB and Redis, so that
 * tests can read the items and keys the copied designs leave behind.
 */
export function labKeyStoreEnv(stores: { dynamodbUrl: string; redisUrl: string }) {
  return {
    LAB_DYNAMODB_ENDPOINT: stores.dynamodbUrl,
    LAB_REDIS_URL: stores.redisUrl,
    // A configured DynamoDB gets its region and credentials from the AWS
    // SDK's usual chain, as at AWS; dynalite checks no signature.
    AWS_REGION: "local",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
  };
}
