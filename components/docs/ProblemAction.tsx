import type { ProblemAction } from "@/lib/pages/problems";

const STYLES: Record<ProblemAction, string> = {
  retry: "bg-emerald-50 text-emerald-900 ring-emerald-200",
  "new-key": "bg-amber-50 text-amber-900 ring-amber-200",
  fix: "bg-sky-50 text-sky-900 ring-sky-200",
};

/** What the client should do about a problem, as a badge: retry, a new key, or fix the request. */
export function ProblemActionBadge({ action, label }: { action: ProblemAction; label: string }) {
  return (
    <span
      className={`inline-flex items-center rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${STYLES[action]}`}
      data-testid="problem-action"
    >
      {label}
    </span>
  );
}
