import type { KeyRequestsView } from "@/lib/ledger/key-requests";
import { answerInWords, attemptName } from "@/lib/pages/key-requests";
import { formatTime } from "./format";

/** The requests that presented the key, in the order they arrived, as the server answered each. */
export function KeyRequests({
  requests,
  operation,
}: {
  requests: KeyRequestsView;
  /** The key's operation, whose words the answers are told in. */
  operation: "checkout" | "refund";
}) {
  const { data, notKept } = requests;
  if (data.length === 0) {
    return (
      <p className="text-sm text-mocha" data-testid="key-requests-none">
        No request recorded: the key was used before the shop kept its requests.
      </p>
    );
  }
  // The gap sits after the first ones kept: where the numbering jumps.
  const gapAfter =
    notKept > 0 ? data.findIndex((request, index) => request.attempt !== index + 1) : -1;
  return (
    <ol className="space-y-3" data-testid="key-requests" data-seen={requests.seen}>
      {data.map((request, index) => (
        <li key={request.requestId + request.attempt} className="text-sm">
          {index === gapAfter && (
            <p
              className="mb-3 rounded-xl bg-oat px-3 py-2 text-xs text-mocha"
              data-testid="key-requests-gap"
            >
              {notKept} {notKept === 1 ? "request" : "requests"} in between not kept: the page keeps
              the first and the latest ones of a key.
            </p>
          )}
          <div
            data-testid="key-request"
            data-attempt={request.attempt}
            data-request-id={request.requestId}
            data-status={request.status}
            data-answer={request.answer}
          >
            <p className="flex flex-wrap justify-between gap-x-3">
              <span className="font-semibold text-espresso">{attemptName(request.attempt)}</span>
              <time dateTime={request.receivedAt} className="tabular-nums text-mocha">
                {formatTime(request.receivedAt)}
              </time>
            </p>
            <p className="text-mocha">{capitalised(answerInWords(request, operation))}.</p>
            <p className="text-xs text-mocha">
              Request id <code className="break-all font-mono">{request.requestId}</code>
            </p>
          </div>
        </li>
      ))}
    </ol>
  );
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
