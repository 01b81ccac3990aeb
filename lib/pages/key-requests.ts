import { assertNever } from "@/lib/assert-never";
import type { KeyRequestView } from "@/lib/ledger/key-requests";

/**
 * The key page's words for the requests that presented a key, for a
 * shopper rather than for an engineer: what happened to each attempt, with
 * the technical name (replay, 409) in brackets for whoever wants it.
 */

/** 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, … */
export function ordinal(n: number): string {
  const lastTwo = n % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return `${n}th`;
  const suffix = ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${suffix}`;
}

/** What the attempt is called on the page: requests to /keys/… come from the one browser the key belongs to. */
export function attemptName(attempt: number): string {
  return `Your browser's ${ordinal(attempt)} attempt`;
}

/** What a key's operation did, in the words of its answers. */
const DOING = {
  checkout: { did: "paid", doing: "paying", made: "the order was made", other: "a different cart" },
  refund: {
    did: "refunded",
    doing: "refunding",
    made: "the refund was made",
    other: "a different refund",
  },
} as const;

/** What the server answered, in a sentence that starts after "answered" or stands alone. */
export function answerInWords(
  { answer, status }: Pick<KeyRequestView, "answer" | "status">,
  operation: keyof typeof DOING = "checkout",
): string {
  const { did, doing, made, other } = DOING[operation];
  switch (answer) {
    case "completed":
      if (status === 201) return `${did}: ${made} and this answer stored with the key`;
      if (status === 402) return "the card was declined; that answer was stored with the key";
      return `answered ${status}, and that answer was stored with the key`;
    case "lost":
      return `${did} and answered, but the answer was lost on the way (the lost-response demo)`;
    case "replay":
      return `answered with the stored answer, nothing done again (replay of the ${status})`;
    case "conflict":
      return `told to wait: an earlier attempt was still ${doing}, so nothing was done (409)`;
    case "mismatch":
      return `refused: this key was already used for ${other} (422)`;
    case "failed":
      return `failed before an answer was stored (${status}); a retry with the same key finishes it`;
    case "rejected":
      return `refused for the request itself, before the key was used (${status})`;
    default:
      return assertNever(answer, "key request answer");
  }
}
