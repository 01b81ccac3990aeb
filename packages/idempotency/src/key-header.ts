import { parseItem } from "structured-headers";
import { IDEMPOTENCY_KEY_HEADER } from "./headers.js";

/**
 * Reads the Idempotency-Key header. Two spellings name the same key: the bare
 * form Stripe uses (`Idempotency-Key: 8e03…`) and the RFC 8941 sf-string form
 * of the IETF draft (`Idempotency-Key: "8e03…"`).
 */
// Long enough for any UUID, ULID or hash a client might use; bounded because
// the key is stored and indexed.
export const MAX_KEY_LENGTH = 255;

// The field's value as a pattern, for an API document (parseIdempotencyKey is
// what runs; the tests check that the two accept the same values): the bare form
// (not opening with a quote, no comma at either end, which a second field
// joined on would leave), or an RFC 8941 sf-string whose decoded content is
// the key, with any parameters after it (RFC 8941 items may carry them; none
// is defined, so they are ignored). Each alternative inside the quotes is
// one character of the key, so {1,255} bounds the key, not the field.
const SF_BARE_ITEM =
  String.raw`-?\d{1,15}|-?\d{1,12}\.\d{1,3}|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"|[A-Za-z*][!#$%&'*+\-.^_` +
  "`" +
  String.raw`|~0-9A-Za-z:/]*|:[A-Za-z0-9+/=]*:|\?[01]`;
const SF_PARAMETERS = String.raw`(?:;\x20*[a-z*][a-z0-9_.*-]*(?:=(?:${SF_BARE_ITEM}))?)*`;
export const IDEMPOTENCY_KEY_FIELD_PATTERN = new RegExp(
  String.raw`^(?:(?![",])[\x21-\x7e]{0,${MAX_KEY_LENGTH - 1}}[\x21-\x2b\x2d-\x7e]|"(?:[\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,${MAX_KEY_LENGTH}}"${SF_PARAMETERS})$`,
);

/** What the field accepts, in words: for an API document's description of the header. */
export const IDEMPOTENCY_KEY_FIELD_DESCRIPTION = `One key per operation the client means to happen once, reused on every retry of it: printable ASCII without spaces, 1 to ${MAX_KEY_LENGTH} characters (a UUID v4 is a good choice). Sent bare, as Stripe takes it, or as an RFC 8941 sf-string ("…"), as draft-ietf-httpapi-idempotency-key-header asks; both name the same key.`;

export type KeyParseResult =
  | { ok: true; key: string }
  | { ok: false; reason: "missing" | "repeated" | "invalid"; detail: string };

// Printable ASCII without space: 0x21 to 0x7E.
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * @param fieldValue the header as the Fetch API gives it: `null` when absent,
 *   and several fields joined with ", " (which no valid key contains, since
 *   a space is not allowed in one), then trimmed: so a key may not begin or
 *   end with a comma either.
 */
export function parseIdempotencyKey(fieldValue: string | null): KeyParseResult {
  if (fieldValue === null || fieldValue.trim() === "") {
    return {
      ok: false,
      reason: "missing",
      detail: `The ${IDEMPOTENCY_KEY_HEADER} header is required for this request.`,
    };
  }
  const value = fieldValue.trim();
  if (value.startsWith('"')) return parseQuotedKey(value);
  // Several fields arrive joined with ", ", and an empty one leaves a comma
  // at either end once the value is trimmed ("k, " is "k,").
  if (value.includes(", ") || value.startsWith(",") || value.endsWith(",")) {
    return {
      ok: false,
      reason: "repeated",
      detail: `Send exactly one ${IDEMPOTENCY_KEY_HEADER} field.`,
    };
  }
  return validateKey(value);
}

function parseQuotedKey(value: string): KeyParseResult {
  let item;
  try {
    item = parseItem(value);
  } catch {
    if (looksLikeSeveralStrings(value)) {
      return {
        ok: false,
        reason: "repeated",
        detail: `Send exactly one ${IDEMPOTENCY_KEY_HEADER} field.`,
      };
    }
    return {
      ok: false,
      reason: "invalid",
      detail: `${IDEMPOTENCY_KEY_HEADER} is not a valid quoted string (RFC 8941).`,
    };
  }
  const [bareItem] = item;
  if (typeof bareItem !== "string") {
    return { ok: false, reason: "invalid", detail: `${IDEMPOTENCY_KEY_HEADER} must be a string.` };
  }
  return validateKey(bareItem);
}

function looksLikeSeveralStrings(value: string): boolean {
  return /^"[^"]*"\s*,\s*\S/.test(value);
}

function validateKey(key: string): KeyParseResult {
  if (key.length === 0) {
    return { ok: false, reason: "invalid", detail: `${IDEMPOTENCY_KEY_HEADER} must not be empty.` };
  }
  if (key.length > MAX_KEY_LENGTH) {
    return {
      ok: false,
      reason: "invalid",
      detail: `${IDEMPOTENCY_KEY_HEADER} must be at most ${MAX_KEY_LENGTH} characters (got ${key.length}).`,
    };
  }
  if (!PRINTABLE_ASCII.test(key)) {
    return {
      ok: false,
      reason: "invalid",
      detail: `${IDEMPOTENCY_KEY_HEADER} may contain only printable ASCII characters, without spaces.`,
    };
  }
  return { ok: true, key };
}
