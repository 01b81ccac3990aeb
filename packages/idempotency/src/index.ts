/**
 * @oncepay/idempotency: an operation runs once per Idempotency-Key, however
 * many times it is sent, whichever instance gets it, and wherever an
 * attempt dies. The stores are in "./pg" and "./prisma", the HTTP adapter
 * in "./fetch"; "./request" and "./headers" read a request without the engine.
 */
export { isDatabaseUnavailable } from "./database-errors.js";
export {
  createEngine,
  type Engine,
  type EngineOptions,
  type KeyedCall,
  type RunOptions,
  type StoredKey,
  type WaitingOptions,
} from "./engine.js";
export { fingerprintRequest } from "./fingerprint.js";
export {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_EXPIRES_HEADER,
  KEY_POLICY_HEADER,
  PREFER_HEADER,
  PREFERENCE_APPLIED_HEADER,
  RETRY_AFTER_HEADER,
} from "./headers.js";
export { KeyWaiters, keyTopic, KEY_CHANGED_CHANNEL, type Subscription } from "./key-events.js";
export { keyLifetimeHeaders } from "./key-lifetime.js";
export {
  defineOperation,
  FINISHED,
  sideEffectKeyOf,
  type AtomicPhase,
  type FieldError,
  type JsonObject,
  type KeyedRequest,
  type Operation,
  type ParseResult,
  type Phase,
  type PhaseContext,
  type SideEffectContext,
  type SideEffectPhase,
  type Step,
} from "./operation.js";
export { RETRY_AFTER_SECONDS, type Outcome, type Waited } from "./outcome.js";
export { recoverAbandonedKeys, type RecoveryOptions, type RecoveryReport } from "./recovery.js";
export { silentReporter, type Reporter } from "./reporter.js";
export * from "./request.js";
export { SideEffectOutcomeUnknown, SideEffectRejected } from "./side-effect-errors.js";
export {
  LeaseLostError,
  type AbandonedKey,
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type KeyLifetime,
  type KeyMove,
  type KeyStore,
  type KeyTimings,
  type PointMove,
} from "./store.js";
export { toHttpResponse, type StoredResponse } from "./stored-response.js";
