/**
 * "@oncepay/idempotency/request": reading a request's key and JSON body,
 * with nothing of the engine and nothing of Node's (so a browser bundle or a
 * module that must stay clear of the engine can use it too).
 */
export { canonicalJson } from "./canonical-json.js";
export { checkJsonRules, MAX_JSON_DEPTH, type JsonRuleViolation } from "./json-rules.js";
export {
  IDEMPOTENCY_KEY_FIELD_DESCRIPTION,
  IDEMPOTENCY_KEY_FIELD_PATTERN,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
  type KeyParseResult,
} from "./key-header.js";
export { preferenceAppliedWait, preferredWaitSeconds } from "./prefer.js";
export { MAX_BODY_BYTES, readAtMost, readJsonBody, type BodyReadResult } from "./request-body.js";
