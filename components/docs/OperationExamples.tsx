import type { OperationExampleView } from "@/lib/pages/api-examples";
import { HttpExample } from "./HttpExample";

/** An operation's example request beside the answers it gets, from the document's examples. */
export function OperationExamples({ example }: { example: OperationExampleView }) {
  return (
    <div className="mt-4 grid gap-4 xl:grid-cols-2">
      <HttpExample caption="Example request" message={example.request} testId="example-request" />
      <div className="min-w-0 space-y-4">
        {example.answers.map((answer) => (
          <HttpExample
            key={answer.status}
            caption={`Example answer · ${answer.status}`}
            message={answer}
            testId="example-answer"
            status={answer.status}
          />
        ))}
      </div>
    </div>
  );
}
