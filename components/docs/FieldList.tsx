import type { FieldRow } from "@/lib/pages/schema-fields";
import { Prose } from "./Prose";

/** Fields or parameters, one row each: name, type, required or not, what it means. */
export function FieldList({ fields, label }: { fields: FieldRow[]; label: string }) {
  return (
    <ul aria-label={label} className="divide-y divide-sand rounded-xl border border-sand bg-white">
      {fields.map((field) => (
        <li
          key={`${field.path} ${field.variant ?? ""}`}
          className="px-4 py-2.5 text-sm"
          data-testid="field-row"
        >
          <p className="flex flex-wrap items-baseline gap-x-2 gap-y-0.5">
            <code className="break-all font-mono font-semibold text-espresso">{field.path}</code>
            <span className="break-words text-mocha">{field.type}</span>
            {field.required && (
              <span className="text-xs font-semibold uppercase tracking-wide text-clay">
                required
              </span>
            )}
            {field.variant && (
              <span className="rounded-full bg-oat px-2 py-px text-xs font-medium text-espresso">
                when {field.variant}
              </span>
            )}
          </p>
          {field.description && (
            <p className="mt-0.5 leading-relaxed text-mocha">
              <Prose text={field.description} />
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
