import type { OperationEntry } from "@/lib/pages/api-reference";
import { MethodBadge } from "./badges";
import { FieldList } from "./FieldList";
import { OperationExamples } from "./OperationExamples";
import { Prose } from "./Prose";
import { ResponseList } from "./ResponseList";

/**
 * One operation: what it takes, an example request and answer, and every
 * answer it can give (folded away, but for the checkout's, which the rules
 * link into: most of them are the answers every operation shares).
 */
export function OperationArticle({
  operation,
  answersOpen = false,
}: {
  operation: OperationEntry;
  answersOpen?: boolean;
}) {
  const { id, method, path, summary, description, authenticated, parameters, requestBody } =
    operation;
  return (
    <article
      id={id}
      aria-labelledby={`${id}-title`}
      className="scroll-mt-6 rounded-2xl border border-sand bg-cream/60 p-4 sm:p-6"
      data-testid="api-operation"
      data-operation-id={id}
    >
      <p className="flex flex-wrap items-center gap-2">
        <MethodBadge method={method} />
        <code className="break-all font-mono text-sm font-semibold text-espresso">{path}</code>
        {authenticated && (
          <span className="rounded-full bg-white px-2 py-0.5 text-xs text-mocha ring-1 ring-sand">
            Signed in
          </span>
        )}
      </p>
      <h3 id={`${id}-title`} className="mt-2 font-display text-xl font-semibold text-espresso">
        {summary}
      </h3>
      {description && (
        <p className="mt-1 max-w-3xl leading-relaxed text-mocha">
          <Prose text={description} />
        </p>
      )}
      {parameters.length > 0 && (
        <>
          <h4 className="mt-4 text-sm font-semibold text-espresso">Parameters</h4>
          <div className="mt-2">
            <FieldList
              label={`Parameters of ${method} ${path}`}
              fields={parameters.map((parameter) => ({
                path: parameter.name,
                type: `${parameter.type} · ${parameter.in}`,
                required: parameter.required,
                ...(parameter.description && { description: parameter.description }),
              }))}
            />
          </div>
        </>
      )}
      {requestBody && (
        <p className="mt-4 text-sm text-espresso">
          <span className="font-semibold">Body</span> (application/json):{" "}
          <a href={`#schema-${requestBody}`} className="font-mono text-clay underline">
            {requestBody}
          </a>
        </p>
      )}
      {operation.example && <OperationExamples example={operation.example} />}
      <details className="group mt-4" open={answersOpen}>
        <summary className="cursor-pointer text-sm font-semibold text-espresso hover:underline">
          Every answer ({operation.responses.length})
        </summary>
        <div className="mt-2">
          <ResponseList operationId={id} responses={operation.responses} />
        </div>
      </details>
    </article>
  );
}
