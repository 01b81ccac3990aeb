import type { SchemaEntry } from "@/lib/pages/api-reference";
import { FieldList } from "./FieldList";

/** One component schema of the document, its fields listed (folded: some have dozens). */
export function SchemaArticle({ schema }: { schema: SchemaEntry }) {
  return (
    <article
      id={`schema-${schema.name}`}
      aria-labelledby={`schema-${schema.name}-title`}
      className="scroll-mt-6"
      data-testid="api-schema"
      data-schema={schema.name}
    >
      <h3
        id={`schema-${schema.name}-title`}
        className="font-mono text-base font-semibold text-espresso"
      >
        {schema.name}
      </h3>
      <div className="mt-2">
        {schema.fields.length > 0 ? (
          <details>
            <summary className="cursor-pointer text-sm text-mocha hover:underline">
              {schema.fields.length} {schema.fields.length === 1 ? "field" : "fields"}
            </summary>
            <div className="mt-2">
              <FieldList label={`Fields of ${schema.name}`} fields={schema.fields} />
            </div>
          </details>
        ) : (
          <p className="text-sm text-mocha">{schema.type}</p>
        )}
      </div>
    </article>
  );
}
