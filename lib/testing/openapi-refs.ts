import { COMPONENT_SCHEMA_PREFIX, type JsonObject } from "@/lib/openapi/document";

/**
 * The document's `$ref`s into its components, pointed at the copy of the
 * document registered with ajv under `documentId`, so a schema taken out of
 * the document still resolves the schemas it names.
 */
export function refsPointedInto(documentId: string, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => refsPointedInto(documentId, item));
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node as JsonObject).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string" && value.startsWith(COMPONENT_SCHEMA_PREFIX)
        ? `${documentId}${value}`
        : refsPointedInto(documentId, value),
    ]),
  );
}
