import type { ResponseRow } from "@/lib/pages/api-reference";
import { StatusBadge } from "./badges";
import { Prose } from "./Prose";

/** Every answer an operation can give, each anchored as `{operationId}-{status}`. */
export function ResponseList({
  operationId,
  responses,
}: {
  operationId: string;
  responses: ResponseRow[];
}) {
  return (
    <ul
      aria-label="Answers"
      className="divide-y divide-sand rounded-xl border border-sand bg-white"
    >
      {responses.map((response) => (
        <li
          key={response.status}
          id={`${operationId}-${response.status}`}
          className="grid gap-x-4 gap-y-1 px-4 py-3 text-sm sm:grid-cols-[4rem_1fr]"
          data-testid="response-row"
          data-status={response.status}
        >
          <p>
            <StatusBadge status={response.status} />
          </p>
          <div className="min-w-0 space-y-1.5">
            <p className="leading-relaxed text-espresso">
              <Prose text={response.description} />
            </p>
            {response.problems.length > 0 && (
              <ul aria-label="Problem types" className="flex flex-wrap gap-1.5">
                {response.problems.map((problem) => (
                  <li key={problem}>
                    <a
                      href={problem}
                      className="break-all rounded bg-oat px-1.5 py-0.5 font-mono text-xs text-roast underline-offset-2 hover:underline"
                    >
                      {problem}
                    </a>
                  </li>
                ))}
              </ul>
            )}
            <p className="text-xs text-mocha">
              {bodyInWords(response.body)}
              {" · Headers: "}
              {response.headers.map((header, index) => (
                <span key={header.name}>
                  {index > 0 && ", "}
                  <code className="font-mono text-roast">{header.name}</code>
                  {!header.required && " (when it applies)"}
                </span>
              ))}
            </p>
          </div>
        </li>
      ))}
    </ul>
  );
}

function bodyInWords(body: ResponseRow["body"]): string {
  if (body === undefined) return "No body";
  if (body === "problem") return "Body: problem details (application/problem+json)";
  if (body === "text") return "Body: text";
  return `Body: ${body}`;
}
