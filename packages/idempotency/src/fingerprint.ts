import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";

/**
 * What makes two requests "the same request" for a key: method, path and the
 * JSON body with its object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
 * match while any change of value, endpoint or method does not.
 */
export function fingerprintRequest(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(method.toUpperCase())
    .update("\n")
    .update(path)
    .update("\n")
    .update(canonicalJson(body))
    .digest("hex");
}
