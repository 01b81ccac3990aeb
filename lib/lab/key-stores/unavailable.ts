/**
 * A key store the lab could not start or reach: the copied design that
 * needs it cannot run here, which is no failure of the checkout. Apart
 * from connections.ts so that a route that never uses a key store (the
 * lab's keyless one) does not load the AWS SDK and node-redis to know it.
 */
export class LabKeyStoreUnavailable extends Error {
  constructor(
    /** Which store, in words a client may see: "DynamoDB", "Redis". */
    readonly store: string,
    /** For the log: what its client said, and what an operator can set. */
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "LabKeyStoreUnavailable";
  }
}
