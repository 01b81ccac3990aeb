import { checkJsonRules } from "./json-rules.js";

/**
 * Reads a JSON request body within a size limit, without trusting
 * Content-Length alone (a client can omit it or lie), and refuses JSON that
 * the server could not store or hash (json-rules.ts).
 */
export const MAX_BODY_BYTES = 16 * 1024;

export type BodyReadResult =
  | { ok: true; json: unknown }
  | {
      ok: false;
      reason:
        | "unsupported-media-type"
        | "body-too-large"
        | "body-incomplete"
        | "malformed-json"
        | "unacceptable-json";
      detail: string;
    };

export async function readJsonBody(
  request: Request,
  limitBytes = MAX_BODY_BYTES,
): Promise<BodyReadResult> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return {
      ok: false,
      reason: "unsupported-media-type",
      detail: "Send the body as JSON with Content-Type: application/json.",
    };
  }
  // The server decodes no content coding. Reading gzip's bytes as JSON would
  // refuse a real compressed body as "not UTF-8", and accept a plain one
  // labelled gzip that anything in front of us that does decode would read
  // differently; RFC 9110 (15.5.16) makes either a 415.
  if (!isIdentityCoding(request.headers.get("content-encoding"))) {
    return {
      ok: false,
      reason: "unsupported-media-type",
      detail: "Send the body uncompressed, without a Content-Encoding.",
    };
  }
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limitBytes) {
    return tooLarge(limitBytes);
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await readAtMost(request, limitBytes);
  } catch {
    // The client went away mid-upload. Nothing was read, so nothing was
    // claimed; it is the client's doing, not an outage, and not worth more
    // than the request's own log line.
    return {
      ok: false,
      reason: "body-incomplete",
      detail: "The request body broke off before it ended. Send it again with the same key.",
    };
  }
  if (bytes === null) return tooLarge(limitBytes);

  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, reason: "malformed-json", detail: "The body is not valid UTF-8." };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      reason: "malformed-json",
      detail: `The body is not valid JSON: ${(error as Error).message}`,
    };
  }
  const violation = checkJsonRules(json);
  if (violation) return { ok: false, reason: "unacceptable-json", detail: violation.detail };
  return { ok: true, json };
}

function isJsonContentType(value: string | null): boolean {
  if (!value) return false;
  const mediaType = value.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function isIdentityCoding(value: string | null): boolean {
  return value === null || value.trim() === "" || value.trim().toLowerCase() === "identity";
}

function tooLarge(limitBytes: number) {
  return {
    ok: false as const,
    reason: "body-too-large" as const,
    detail: `The body must be at most ${limitBytes} bytes.`,
  };
}

/**
 * The body's bytes, or null as soon as it grows past the limit: for a body
 * that must be read exactly as sent (a signed webhook), not parsed.
 */
export async function readAtMost(request: Request, limitBytes: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
