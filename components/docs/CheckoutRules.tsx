import type { CheckoutRule } from "@/lib/pages/checkout-rules";
import { StatusBadge } from "./badges";

/** How a client uses its Idempotency-Key, each rule linked to the checkout's answers it is about. */
export function CheckoutRules({
  rules,
  checkoutId,
}: {
  rules: CheckoutRule[];
  checkoutId: string;
}) {
  return (
    <ol className="grid gap-3 md:grid-cols-2" data-testid="checkout-rules">
      {rules.map((rule, index) => (
        <li key={rule.title} className="rounded-2xl border border-sand bg-white p-5">
          <h3 className="font-display text-lg font-semibold text-espresso">
            <span className="mr-2 text-clay" aria-hidden="true">
              {index + 1}.
            </span>
            {rule.title}
          </h3>
          <p className="mt-1.5 text-sm leading-relaxed text-mocha">{rule.text}</p>
          <p className="mt-3 flex flex-wrap items-center gap-1.5 text-xs text-mocha">
            <span>See</span>
            {rule.answers.map((answer) => (
              <a
                key={`${answer.status}-${answer.problem ?? ""}`}
                href={`#${checkoutId}-${answer.status}`}
                className="inline-flex items-center gap-1 rounded-md hover:underline"
              >
                <StatusBadge status={answer.status} />
                {answer.problem && <code className="font-mono text-roast">{answer.problem}</code>}
              </a>
            ))}
          </p>
        </li>
      ))}
    </ol>
  );
}
